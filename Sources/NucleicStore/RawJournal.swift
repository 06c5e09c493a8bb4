#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import NucleicProtocol

/// One line an agent or the host wrote, as the raw journal keeps it.
public struct RawRecord: Sendable, Hashable {
    /// Byte offset of the record in `raw.jsonl` (what transcript lines point at).
    public var offset: Int64
    /// Seconds since the journal started.
    public var t: Double
    public var direction: RawJournal.Direction
    /// The exact bytes of the line, without its newline (invalid UTF-8 included).
    public var line: [UInt8]

    public init(offset: Int64, t: Double, direction: RawJournal.Direction, line: [UInt8]) {
        self.offset = offset
        self.t = t
        self.direction = direction
        self.line = line
    }

    /// The line as text (invalid UTF-8 shown as U+FFFD).
    public var text: String { String(decoding: line, as: UTF8.self) }
}

/// A session's `raw.jsonl`: every line between the host and the agent, both directions,
/// verbatim, in the fixture format of DESIGN.md §6 (docs/FIXTURES.md), so any session can be
/// exported and replayed.
///
/// Append-only. The file is locked (`flock`) while open, so one writer at a time. Not `Sendable`
/// and blocking: owned by one session and called from its serial executor. The policy on
/// durability and repair is in docs/STORE.md.
public final class RawJournal {
    public static let fileName = "raw.jsonl"

    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// The agent wrote it to stdout.
        case out
        /// The host wrote it to the agent's stdin.
        case `in`
        /// The agent wrote it to stderr.
        case err
    }

    /// The first line: `{"fixture":1,"backend","cli","argv","scenario"}`.
    public struct Header: Sendable, Hashable, JSONRepresentable {
        public static let formatVersion: Int64 = 1

        public var backend: String
        public var cli: String
        public var argv: [String]
        public var scenario: String

        public init(backend: String, cli: String, argv: [String], scenario: String) {
            self.backend = backend
            self.cli = cli
            self.argv = argv
            self.scenario = scenario
        }

        public var json: JSONValue {
            ["fixture": .int(Self.formatVersion), "backend": .string(backend), "cli": .string(cli),
             "argv": .array(argv.map(JSONValue.string)), "scenario": .string(scenario)]
        }

        public init(json: JSONValue) throws(ShapeError) {
            let f = try Fields(json, "fixture header")
            let version = try f.int("fixture")
            guard version == Self.formatVersion else {
                throw ShapeError("fixture header: format version \(version), this nucleic reads version \(Self.formatVersion)")
            }
            self.init(backend: try f.string("backend"), cli: try f.optionalString("cli") ?? "",
                      argv: (f["argv"]?.arrayValue ?? []).compactMap(\.stringValue), scenario: try f.optionalString("scenario") ?? "")
        }
    }

    public let path: String
    public let header: Header
    /// Where the next record will start (the file's length).
    public private(set) var endOffset: Int64
    /// Byte offset of the first record (just after the header line).
    public let firstRecordOffset: Int64
    /// What opening found and fixed.
    public let repair: RepairReport

    private var fd: Int32
    /// Set when a failed write could not be rolled back: appends are refused until a reopen repairs.
    private var broken: StoreError?

    /// Opens the journal at `path` for appending, repairing a torn tail. A missing or empty file
    /// is created with `header`; without one, it is an error.
    public init(path: String, creatingWith header: Header? = nil) throws(StoreError) {
        self.path = path
        let fd = try FileIO.open(path, O_RDWR | O_CREAT)
        do throws(StoreError) {
            try FileIO.lockExclusive(fd, path: path, what: "raw journal")
            let opened = try Self.openAndRepair(fd: fd, path: path, header: header)
            self.fd = fd
            self.header = opened.header
            self.firstRecordOffset = opened.firstRecord
            self.endOffset = opened.end
            self.repair = opened.report
        } catch {
            FileIO.closeLocked(fd)
            throw error
        }
    }

    /// Opens `raw.jsonl` in a session folder.
    public convenience init(folder: String, creatingWith header: Header? = nil) throws(StoreError) {
        try self.init(path: FileIO.join(folder, Self.fileName), creatingWith: header)
    }

    deinit { close() }

    /// Releases the file and its lock. Later calls fail with `.closed`.
    public func close() {
        if fd >= 0 { FileIO.closeLocked(fd) }
        fd = -1
    }

    // MARK: Appending

    /// Appends one record and returns the byte offset where it starts. With `sync`, the record is
    /// on disk when this returns (`fdatasync`). On failure nothing of the record stays in the
    /// file (see docs/STORE.md) and the error says why (`.diskFull` for ENOSPC / EFBIG).
    @discardableResult
    public func append(direction: Direction, line: [UInt8], t: Double, sync: Bool = true) throws(StoreError) -> Int64 {
        try appendStreaming(direction: direction, t: t, sync: sync) { (w: inout RawLineWriter) throws(StoreError) in
            try w.write(line)
        }
    }

    @discardableResult
    public func append(direction: Direction, line: String, t: Double, sync: Bool = true) throws(StoreError) -> Int64 {
        try appendStreaming(direction: direction, t: t, sync: sync) { (w: inout RawLineWriter) throws(StoreError) in
            try w.write(line)
        }
    }

    /// Appends one record whose line arrives in pieces: `body` writes them to the writer, which
    /// escapes each as it comes and writes to the file in 64 KiB pieces, so a line of any size is
    /// never held whole (let alone twice). If `body` throws, the partial record is removed and
    /// the error rethrown. Returns the record's offset.
    @discardableResult
    public func appendStreaming<E: Error>(direction: Direction, t: Double, sync: Bool = true,
                                          _ body: (inout RawLineWriter) throws(E) -> Void) throws(StoreError) -> Int64 {
        // `E` is StoreError for the writer's own failures; any other error from `body` is
        // reported as `.invalidArgument` with its description, after the rollback.
        guard fd >= 0 else { throw StoreError(.closed, "raw journal \(path) is closed", path: path) }
        if let broken { throw broken }
        let start = endOffset
        var writer = RawLineWriter(fd: fd, path: path, offset: start)
        do throws(StoreError) {
            try writer.begin(RawRecordCodec.recordPrefix(t: t, direction: direction))
            do throws(E) { try body(&writer) } catch {
                if let e = error as? StoreError { throw e }
                throw StoreError(.invalidArgument, "raw journal \(path): the line's producer failed: \(error)", path: path)
            }
            let end = try writer.finish()
            if sync { try FileIO.sync(fd, path: path) }
            endOffset = end
            return start
        } catch {
            rollBack(to: start, after: error)
            throw error
        }
    }

    /// Makes every record appended so far durable.
    public func sync() throws(StoreError) {
        guard fd >= 0 else { throw StoreError(.closed, "raw journal \(path) is closed", path: path) }
        try FileIO.sync(fd, path: path)
    }

    private func rollBack(to offset: Int64, after error: StoreError) {
        do throws(StoreError) {
            try FileIO.truncate(fd, to: offset, path: path)
        } catch {
            broken = StoreError(.needsRepair, "raw journal \(path): a write failed and could not be undone (\(error.message)); reopen it to repair",
                                function: error.function, path: path, errno: error.errno)
        }
    }

    // MARK: Reading

    /// The records from `offset` (a record's start; nil: the first record) up to the end as it
    /// is now.
    public func records(from offset: Int64? = nil) throws(StoreError) -> RawJournalCursor {
        try RawJournalCursor(path: path, from: offset ?? firstRecordOffset, limit: endOffset, skipHeader: false)
    }

    /// Reads any journal without opening it for writing (no lock, no repair), following the file
    /// as it grows: a record still being written is returned once complete.
    public static func records(path: String, from offset: Int64? = nil) throws(StoreError) -> RawJournalCursor {
        try RawJournalCursor(path: path, from: offset ?? 0, limit: nil, skipHeader: offset == nil)
    }

    /// The header of the journal or fixture at `path`.
    public static func readHeader(path: String) throws(StoreError) -> Header {
        let fd = try FileIO.open(path, O_RDONLY)
        defer { Glibc.close(fd) }
        let reader = LineReader(fd: fd, path: path, from: 0)
        guard let line = try reader.next() else {
            throw StoreError(.corrupt, "\(path) has no complete header line", path: path)
        }
        return try parseHeader(line.bytes, path: path)
    }

    static func parseHeader(_ bytes: [UInt8], path: String) throws(StoreError) -> Header {
        do {
            return try Header(json: JSONParser.parse(bytes))
        } catch {
            throw StoreError(.corrupt, "\(path): the first line is not a fixture header (\(error)); this is not a raw journal", path: path)
        }
    }
}

/// Writes one record's line into the journal, escaping as it goes (see `appendStreaming`).
public struct RawLineWriter: ~Copyable {
    static let flushSize = 64 * 1024

    let fd: Int32
    let path: String
    /// Where the next flushed byte goes.
    private var offset: Int64
    private var out: [UInt8] = []
    private var escaper = LineEscaper()

    init(fd: Int32, path: String, offset: Int64) {
        self.fd = fd
        self.path = path
        self.offset = offset
        out.reserveCapacity(Self.flushSize + 64)
    }

    mutating func begin(_ prefix: [UInt8]) throws(StoreError) {
        out.append(contentsOf: prefix)
    }

    /// Appends bytes of the line (not including a newline: one in here is kept as `\n` inside
    /// the line).
    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws(StoreError) {
        let all = bytes.bindMemory(to: UInt8.self)
        var i = 0
        // In slices, so the escaped form waiting in `out` stays small however big `bytes` is.
        while i < all.count {
            let j = Swift.min(all.count, i + Self.flushSize)
            escaper.escape(UnsafeBufferPointer(rebasing: all[i..<j]), into: &out)
            if out.count >= Self.flushSize { try flush() }
            i = j
        }
    }

    public mutating func write(_ bytes: [UInt8]) throws(StoreError) {
        let result: Result<Void, StoreError> = bytes.withUnsafeBytes { raw in
            Result { () throws(StoreError) in try write(raw) }
        }
        try result.get()
    }

    public mutating func write(_ text: String) throws(StoreError) {
        var text = text
        let result: Result<Void, StoreError> = text.withUTF8 { utf8 in
            Result { () throws(StoreError) in try write(UnsafeRawBufferPointer(utf8)) }
        }
        try result.get()
    }

    /// Ends the record; returns the offset just after it.
    mutating func finish() throws(StoreError) -> Int64 {
        escaper.finish(into: &out)
        out.append(contentsOf: RawRecordCodec.recordSuffix)
        try flush()
        return offset
    }

    private mutating func flush() throws(StoreError) {
        guard !out.isEmpty else { return }
        try FileIO.writeAll(fd, out, at: offset, path: path)
        offset += Int64(out.count)
        out.removeAll(keepingCapacity: true)
    }
}

/// Reads a raw journal's records one at a time (at most one line in memory).
public final class RawJournalCursor {
    public let path: String
    private let fd: Int32
    private let reader: LineReader
    private var skipHeader: Bool

    init(path: String, from offset: Int64, limit: Int64?, skipHeader: Bool) throws(StoreError) {
        self.path = path
        fd = try FileIO.open(path, O_RDONLY)
        reader = LineReader(fd: fd, path: path, from: offset, limit: limit)
        self.skipHeader = skipHeader
    }

    deinit { Glibc.close(fd) }

    /// Where the next record starts.
    public var offset: Int64 { reader.offset }

    /// The next record, or nil when there is none (yet). Blank lines are skipped.
    public func next() throws(StoreError) -> RawRecord? {
        while var line = try reader.next() {
            if skipHeader {
                skipHeader = false
                _ = try RawJournal.parseHeader(line.bytes, path: path)
                continue
            }
            if line.bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            do {
                return try RawRecordCodec.decode(&line.bytes, offset: line.offset)
            } catch {
                throw StoreError(.corrupt, "raw journal \(path): the record at byte \(line.offset) is not a record (\(error.message) at byte \(error.offset) of the line)",
                                 path: path)
            }
        }
        return nil
    }

    /// Calls `body` with each remaining record.
    public func forEach(_ body: (RawRecord) throws(StoreError) -> Void) throws(StoreError) {
        while let record = try next() { try body(record) }
    }
}
