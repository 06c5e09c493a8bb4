#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a byte stream into lines, however the bytes arrive (whole, byte by byte, in chunks).
///
/// A line longer than `limit` is not held: its first `previewBytes` are kept for the error event
/// and the rest is counted and dropped, so reading never holds more than one line in memory
/// (DESIGN.md §6). A trailing `\r` is kept: agents write `\n`-terminated JSON, and whitespace
/// around JSON is harmless to the parser.
public struct LineFramer: Sendable {
    public enum Output: Sendable, Hashable {
        case line([UInt8])
        /// A line over the limit: its first bytes and its full length.
        case overLimit(preview: [UInt8], byteCount: Int)
    }

    /// The default limit on one agent line: 64 MiB (DESIGN.md §6).
    public static let defaultLimit = 64 << 20

    public let limit: Int
    public let previewBytes: Int
    private var buffer: [UInt8] = []
    private var droppedCount = 0
    private var overflowing = false

    public init(limit: Int = LineFramer.defaultLimit, previewBytes: Int = 256) {
        precondition(limit > 0)
        self.limit = limit
        self.previewBytes = min(previewBytes, limit)
    }

    /// Bytes of the current, unfinished line (held or counted).
    public var pendingByteCount: Int { buffer.count + droppedCount }

    /// Feeds bytes; returns the lines they complete.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [Output] {
        // Contiguous bytes (an array, a slice, a read buffer) take a path specialized for them:
        // the generic one is not specialized for callers in other modules and costs a witness
        // call per byte (27 MB/s; docs/BENCHMARKS.md).
        if let out = bytes.withContiguousStorageIfAvailable({ feed(contiguous: $0) }) { return out }
        var out: [Output] = []
        var rest = bytes[...]
        while let newline = rest.firstIndex(of: UInt8(ascii: "\n")) {
            take(rest[..<newline])
            out.append(finishLine())
            rest = rest[rest.index(after: newline)...]
        }
        take(rest)
        return out
    }

    private mutating func feed(contiguous bytes: UnsafeBufferPointer<UInt8>) -> [Output] {
        var out: [Output] = []
        guard let base = bytes.baseAddress else { return out }
        var start = 0
        // memchr: vectorized, where a byte loop costs ~6 instructions a byte.
        while start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) {
            let newline = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            let line = UnsafeBufferPointer(rebasing: bytes[start..<newline])
            if buffer.isEmpty, !overflowing, line.count <= limit {
                // A whole line in one read: one exact-size copy instead of a growing buffer.
                out.append(.line(Array(line)))
            } else {
                take(line)
                out.append(finishLine())
            }
            start = newline + 1
        }
        take(UnsafeBufferPointer(rebasing: bytes[start...]))
        return out
    }

    /// A line handed out borrowed by `feed(_:each:)`: valid only during the call.
    public enum BorrowedOutput {
        case line(UnsafeBufferPointer<UInt8>)
        /// A line over the limit: its first bytes and its full length.
        case overLimit(preview: UnsafeBufferPointer<UInt8>, byteCount: Int)
    }

    /// Feeds bytes and calls `body` with each line they complete, in order, without copying: a line
    /// that lies whole in `bytes` is a view of `bytes`; one assembled across reads is a view of the
    /// framer's buffer. The lines, limits and previews are those `feed(_:)` returns.
    public mutating func feed(_ bytes: UnsafeBufferPointer<UInt8>, each body: (BorrowedOutput) -> Void) {
        guard let base = bytes.baseAddress else { return }
        var start = 0
        while start < bytes.count, let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) {
            let newline = UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
            let line = UnsafeBufferPointer(rebasing: bytes[start..<newline])
            if buffer.isEmpty, !overflowing, line.count <= limit {
                body(.line(line))
            } else {
                take(line)
                finishLine(body)
            }
            start = newline + 1
        }
        take(UnsafeBufferPointer(rebasing: bytes[start...]))
    }

    /// `finish()`, the last line borrowed.
    public mutating func finish(each body: (BorrowedOutput) -> Void) {
        if pendingByteCount > 0 { finishLine(body) }
    }

    /// Hands out the buffered line borrowed, then empties the buffer, keeping its capacity while
    /// it is small (a line assembled across reads is usually followed by another).
    private mutating func finishLine(_ body: (BorrowedOutput) -> Void) {
        let total = buffer.count + droppedCount
        buffer.withUnsafeBufferPointer { held in
            body(overflowing ? .overLimit(preview: held, byteCount: total) : .line(held))
        }
        buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
        droppedCount = 0
        overflowing = false
    }

    /// The last line when the stream ends without a newline (nil when there is none).
    public mutating func finish() -> Output? {
        pendingByteCount > 0 ? finishLine() : nil
    }

    private mutating func take(_ bytes: some Collection<UInt8>) {
        if overflowing {
            droppedCount += bytes.count
            return
        }
        if buffer.count + bytes.count <= limit {
            buffer.append(contentsOf: bytes)
            return
        }
        overflowing = true
        let total = buffer.count + bytes.count
        buffer.append(contentsOf: bytes.prefix(max(0, previewBytes - buffer.count)))
        buffer.removeSubrange(min(buffer.count, previewBytes)...)
        droppedCount = total - buffer.count
    }

    private mutating func finishLine() -> Output {
        defer {
            buffer = []
            droppedCount = 0
            overflowing = false
        }
        if overflowing { return .overLimit(preview: buffer, byteCount: buffer.count + droppedCount) }
        return .line(buffer)
    }
}
