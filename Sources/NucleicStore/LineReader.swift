#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads newline-terminated lines from a file, forward from an offset, through one buffer.
///
/// Memory is the buffer: 64 KiB, grown only while a longer line is being read and given back
/// after it, so reading a file of any length holds at most one line (and `nextSpan` not even
/// that). A line without its newline at the end of the file (a torn write, or one still being
/// written) is not returned: `next()` returns nil and `offset` stays at its start, so a later call
/// picks it up once it is complete.
final class LineReader {
    struct Line {
        /// Byte offset of the line's first byte in the file.
        var offset: Int64
        /// The line without its newline.
        var bytes: [UInt8]
    }

    /// A line seen without keeping it: where it is, how long, and its first bytes.
    struct Span {
        var offset: Int64
        /// Without the newline.
        var length: Int64
        var prefix: [UInt8]
        var end: Int64 { offset + length + 1 }
    }

    static let chunkSize = 64 * 1024
    /// Lines at least this long are handed over in the buffer itself rather than copied.
    static let handOverThreshold = 1 << 20

    let fd: Int32
    let path: String
    /// Where the next line starts.
    private(set) var offset: Int64
    /// Never read at or past this offset (nil: to the end of the file as it grows).
    let limit: Int64?

    private var buffer: [UInt8]
    /// `buffer[start..<end]` holds unread bytes, which begin at file offset `bufferOffset`.
    private var start = 0
    private var end = 0
    private var bufferOffset: Int64

    init(fd: Int32, path: String, from offset: Int64, limit: Int64? = nil) {
        self.fd = fd
        self.path = path
        self.offset = offset
        self.bufferOffset = offset
        self.limit = limit
        buffer = [UInt8](repeating: 0, count: Self.chunkSize)
    }

    /// The next complete line, or nil at the end (or before an unterminated last line).
    func next() throws(StoreError) -> Line? {
        var searched = 0  // unread bytes already searched for a newline
        while true {
            if let newline = findNewline(from: start + searched) {
                return takeLine(endingAt: newline)
            }
            searched = end - start
            // `fill` may move the unread bytes to the front of the buffer; `searched` is relative.
            if try fill() == 0 { return nil }
        }
    }

    /// The next complete line's position, length and first `prefixLength` bytes, reading past the
    /// rest without keeping it (a scan in constant memory). Nil at the end, as `next`.
    func nextSpan(prefixLength: Int) throws(StoreError) -> Span? {
        let lineOffset = offset
        var prefix: [UInt8]?
        var searched = 0
        while true {
            if let newline = findNewline(from: start + searched) {
                let inBuffer = newline - start
                if prefix == nil { prefix = Array(buffer[start..<Swift.min(newline, start + prefixLength)]) }
                let length = bufferOffset + Int64(inBuffer) - lineOffset
                advance(to: newline + 1)
                offset = bufferOffset
                return Span(offset: lineOffset, length: length, prefix: prefix!)
            }
            if prefix == nil, end - start >= prefixLength { prefix = Array(buffer[start..<(start + prefixLength)]) }
            if prefix != nil {
                advance(to: end)  // searched and not needed: drop it
                searched = 0
            } else {
                searched = end - start
            }
            if try fill() == 0 {
                // No newline before the end: forget what was dropped and stay at the line's start.
                start = 0
                end = 0
                bufferOffset = lineOffset
                return nil
            }
        }
    }

    private func advance(to index: Int) {
        bufferOffset += Int64(index - start)
        start = index
        if start == end { start = 0; end = 0 }
    }

    private func findNewline(from: Int) -> Int? {
        guard from < end else { return nil }
        return buffer.withUnsafeBufferPointer { p -> Int? in
            guard let hit = memchr(p.baseAddress! + from, 0x0A, end - from) else { return nil }
            return p.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
    }

    private func takeLine(endingAt newline: Int) -> Line {
        let lineOffset = bufferOffset
        let length = newline - start
        let bytes: [UInt8]
        if length >= Self.handOverThreshold {
            // A long line: hand the buffer itself over (trimmed in place) instead of copying it,
            // so a 64 MiB line is never in memory twice.
            let rest = Array(buffer[(newline + 1)..<end])
            var taken = [UInt8](repeating: 0, count: Swift.max(Self.chunkSize, rest.count))
            swap(&taken, &buffer)
            taken.removeSubrange(newline...)
            taken.removeSubrange(0..<start)
            bytes = taken
            buffer.replaceSubrange(0..<rest.count, with: rest)
            start = 0
            end = rest.count
            bufferOffset = lineOffset + Int64(length) + 1
        } else {
            bytes = Array(buffer[start..<newline])
            advance(to: newline + 1)
        }
        offset = bufferOffset
        return Line(offset: lineOffset, bytes: bytes)
    }

    /// Reads more bytes after the unread ones; returns how many (0 at the end).
    private func fill() throws(StoreError) -> Int {
        // Move the unread bytes to the front, and grow only if they fill the buffer.
        if start > 0 {
            let count = end - start
            if count > 0 {
                buffer.withUnsafeMutableBufferPointer { p in
                    _ = memmove(p.baseAddress!, p.baseAddress! + start, count)
                }
            }
            start = 0
            end = count
        }
        if end == buffer.count {
            buffer.append(contentsOf: repeatElement(0, count: buffer.count))
        } else if end == 0, buffer.count > 4 * Self.chunkSize {
            buffer = [UInt8](repeating: 0, count: Self.chunkSize)  // give a long line's memory back
        }
        let fileOffset = bufferOffset + Int64(end)
        var want = buffer.count - end
        if let limit {
            let left = limit - fileOffset
            if left <= 0 { return 0 }
            want = Int(Swift.min(Int64(want), left))
        }
        let from = end
        let result: Result<Int, StoreError> = buffer.withUnsafeMutableBytes { raw in
            let slice = UnsafeMutableRawBufferPointer(rebasing: raw[from..<(from + want)])
            return Result { () throws(StoreError) -> Int in try FileIO.read(fd, into: slice, at: fileOffset, path: path) }
        }
        let n = try result.get()
        end += n
        return n
    }
}
