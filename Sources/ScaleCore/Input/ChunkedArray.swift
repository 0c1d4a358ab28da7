/// An append-only array kept in fixed-size chunks, for a long sequence that is built once and
/// then read by index: a recording's events, which the daemon's replay holds for as long as it
/// plays.
///
/// An `Array` grows by doubling, and each time it copies everything into a buffer twice the
/// size while the old one is still there: the last growth of a long recording briefly holds
/// 1.5 times the events' size on top of them, the daemon's peak memory. Chunks are never
/// moved or copied once full, so building costs at most one chunk more than the elements,
/// and the elements stay that size afterwards.
///
/// Inlinable: its users are in other modules (a recording's events in ScaleEvdev), where
/// without it every append and every subscript would run the unspecialised generic code,
/// looking up the metadata of `[[Element]]` each time: some 2,000 instructions an event to
/// load a recording and as many to play it.
public struct ChunkedArray<Element>: RandomAccessCollection {
    /// Elements per chunk: a power of two, so that an index splits with a shift and a mask.
    @inlinable public static var chunkCapacity: Int { 1 << chunkShift }
    @inlinable static var chunkShift: Int { 12 }

    @usableFromInline var chunks: [[Element]] = []
    @usableFromInline var elementCount = 0
    @inlinable public var count: Int { elementCount }

    @inlinable public init() {}

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { count }

    @inlinable public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < count, "index \(position) out of range 0..<\(count)")
        return chunks[position >> Self.chunkShift][position & (Self.chunkCapacity - 1)]
    }

    @inlinable public mutating func append(_ element: Element) {
        if count & (Self.chunkCapacity - 1) == 0 {
            // A full chunk's worth reserved at once: the chunk itself never grows by doubling.
            var chunk: [Element] = []
            chunk.reserveCapacity(Self.chunkCapacity)
            chunks.append(chunk)
        }
        chunks[chunks.count - 1].append(element)
        elementCount += 1
    }
}

extension ChunkedArray: Sendable where Element: Sendable {}
