import ScaleCore
import Testing

/// The chunked store the replay keeps a recording's events in: the same elements, in the same
/// order, by index, as an Array built from the same appends, across chunk boundaries.
struct ChunkedArrayTests {
    @Test func anEmptyOneHasNothing() {
        let empty = ChunkedArray<Int>()
        #expect(empty.isEmpty)
        #expect(empty.count == 0)
        #expect(empty.first == nil)
        #expect(empty.last == nil)
        #expect(Array(empty) == [])
    }

    @Test(arguments: [1, 2, 4095, 4096, 4097, 8192, 12_289])
    func holdsWhatWasAppendedInOrder(count: Int) {
        var chunked = ChunkedArray<Int64>()
        var plain: [Int64] = []
        // Values that differ from their index, so a chunk or offset mix-up shows.
        for index in 0..<count {
            let value = Int64(index) * 7_919 + 13
            chunked.append(value)
            plain.append(value)
        }
        #expect(chunked.count == count)
        #expect(chunked.first == plain.first)
        #expect(chunked.last == plain.last)
        #expect(Array(chunked) == plain)
        // Each side of every chunk boundary, read by index as the replay reads it.
        for boundary in stride(from: ChunkedArray<Int64>.chunkCapacity, to: count, by: ChunkedArray<Int64>.chunkCapacity) {
            #expect(chunked[boundary - 1] == plain[boundary - 1])
            #expect(chunked[boundary] == plain[boundary])
        }
    }

    @Test func theChunkSizeIsAPowerOfTwo() {
        let capacity = ChunkedArray<UInt8>.chunkCapacity
        #expect(capacity > 1 && capacity & (capacity - 1) == 0)
    }
}
