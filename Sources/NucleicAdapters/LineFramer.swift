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
