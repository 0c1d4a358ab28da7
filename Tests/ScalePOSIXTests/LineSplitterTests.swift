@testable import ScalePOSIX
import Testing

@Suite struct LineSplitterTests {
    func split(_ chunks: [String], maximum: Int = 16) -> [LineSplitter.Piece] {
        var splitter = LineSplitter(maximumLineBytes: maximum)
        var pieces: [LineSplitter.Piece] = []
        for chunk in chunks {
            Array(chunk.utf8).withUnsafeBytes { splitter.append($0, to: &pieces) }
        }
        return pieces
    }

    @Test func linesArriveWhateverTheChunks() {
        #expect(split(["a\nb", "c\n", "\n", "d\r\ne"]) == [.line(Array("a".utf8)), .line(Array("bc".utf8)), .line(Array("d".utf8))])
    }

    @Test func aLineMayBeExactlyTheLimit() {
        #expect(split([String(repeating: "x", count: 16) + "\n"]) == [.line(Array(String(repeating: "x", count: 16).utf8))])
    }

    @Test func anOverlongLineIsReportedOnceAndSkippedToItsEnd() {
        let long = String(repeating: "x", count: 10)
        #expect(split([long, long, long, "\nok\n"]) == [.lineTooLong, .line(Array("ok".utf8))])
        #expect(split([String(repeating: "y", count: 17) + "\nok\n"]) == [.lineTooLong, .line(Array("ok".utf8))])
    }

    @Test func nothingIsHeldBeyondTheLimit() {
        var splitter = LineSplitter(maximumLineBytes: 16)
        var pieces: [LineSplitter.Piece] = []
        for _ in 0..<100 {
            Array(repeating: UInt8(ascii: "x"), count: 1000).withUnsafeBytes { splitter.append($0, to: &pieces) }
        }
        #expect(splitter.pendingByteCount == 0)
        #expect(pieces == [.lineTooLong])
    }

    @Test func bytesThatAreNotUTF8ArePassedOnAsReceived() {
        var splitter = LineSplitter(maximumLineBytes: 16)
        var pieces: [LineSplitter.Piece] = []
        ([0x7B, 0xFF, 0xFE, 0x7D, 0x0A] as [UInt8]).withUnsafeBytes { splitter.append($0, to: &pieces) }
        #expect(pieces == [.line([0x7B, 0xFF, 0xFE, 0x7D])])
    }
}
