#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import NucleicProtocol

/// A session's `transcript.jsonl`: every event, one `SequencedEvent` JSON object per line
/// (`{"seq","ts",<the event>,"rawOffset"}`), seq 1, 2, 3, … with no gap and no repeat; plus
/// `transcript.idx`, the byte offset of each seq's line as a little-endian UInt64 at
/// `(seq - 1) * 8`, so reading from any seq is one seek.
///
/// The transcript is the source of truth (DESIGN.md §3); the index is derived from it and
/// rebuilt when they disagree. Opening repairs a torn tail (`repair` says what was done).
///
/// Events derived from one raw-journal line share its `rawOffset` and must be appended in one
/// call: all but the last of such a group are written with `"rawMore":true`, so that a crash in
/// the middle of a group is seen on open and the whole group cut. `lastRawOffset` then always
/// names a raw line whose events are all in the transcript, and a restarted reader of the raw
/// journal resumes with the record after it (an adopting daemon, docs/STORE.md).
///
/// Append-only and locked (`flock`) while open: one writer. Not `Sendable`, and every call
/// blocks on the file: owned by one session and called from its serial executor. Readers
/// (`read(from:)`) open the file on their own and can be used anywhere.
public final class Transcript {
    public static let fileName = "transcript.jsonl"
    public static let indexFileName = "transcript.idx"

    public let path: String
    public let indexPath: String
    /// The seq of the last event (0 when empty).
    public private(set) var lastSeq: Int64
    /// The raw-journal offset of the last event that has one.
    public private(set) var lastRawOffset: Int64?
    /// The transcript's length: where the next line goes.
    public private(set) var endOffset: Int64
    /// What opening found and fixed.
    public let repair: RepairReport

    private var fd: Int32
    private var indexFD: Int32
    private var broken: StoreError?

    /// Opens (creating if needed) the transcript in a session folder.
    public convenience init(folder: String) throws(StoreError) {
        try self.init(path: FileIO.join(folder, Self.fileName), indexPath: FileIO.join(folder, Self.indexFileName))
    }

    /// Opens (creating if needed) the transcript at `path` with its index at `indexPath`,
    /// repairing both (docs/STORE.md, "Repair").
    public init(path: String, indexPath: String) throws(StoreError) {
        self.path = path
        self.indexPath = indexPath
        let created = !FileIO.exists(path)
        let fd = try FileIO.open(path, O_RDWR | O_CREAT)
        var indexFD: Int32 = -1
        do throws(StoreError) {
            try FileIO.lockExclusive(fd, path: path, what: "transcript")
            indexFD = try FileIO.open(indexPath, O_RDWR | O_CREAT)
            if created { try FileIO.syncDirectory(FileIO.parentDirectory(path)) }
            let state = try TranscriptRepair(fd: fd, path: path, indexFD: indexFD, indexPath: indexPath).run()
            self.fd = fd
            self.indexFD = indexFD
            self.lastSeq = state.lastSeq
            self.lastRawOffset = state.lastRawOffset
            self.endOffset = state.end
            self.repair = state.report
        } catch {
            if indexFD >= 0 { Glibc.close(indexFD) }
            FileIO.closeLocked(fd)
            throw error
        }
    }

    deinit { close() }

    /// Releases the files and the lock. Later appends fail with `.closed`; cursors already made
    /// keep working.
    public func close() {
        if fd >= 0 { FileIO.closeLocked(fd) }
        if indexFD >= 0 { Glibc.close(indexFD) }
        fd = -1
        indexFD = -1
    }

    // MARK: Appending

    /// Appends `events`, whose seqs must be `lastSeq + 1`, `lastSeq + 2`, … With `sync` they are
    /// on disk when this returns (one `fdatasync` for the batch).
    ///
    /// All or nothing: on any failure (a seq out of order, a full disk) nothing of the batch
    /// stays in either file and the error says why. If undoing a partial write fails too, the
    /// transcript refuses further appends (`.needsRepair`) until reopened, which repairs it.
    public func append(_ events: [SequencedEvent], sync: Bool = true) throws(StoreError) {
        guard fd >= 0 else { throw StoreError(.closed, "transcript \(path) is closed", path: path) }
        if let broken { throw broken }
        guard let first = events.first else { return }
        var expected = lastSeq + 1
        for e in events {
            guard e.seq == expected else {
                let what = e.seq <= lastSeq ? "was already written" : e.seq == first.seq ? "would leave a gap" : "is out of order in the batch"
                throw StoreError(.sequence,
                                 "transcript \(path): event seq \(e.seq) \(what) (the last seq is \(lastSeq), expected \(expected)); nothing was written",
                                 path: path)
            }
            if let raw = e.rawOffset, raw < 0 {
                throw StoreError(.invalidArgument, "transcript \(path): event seq \(e.seq) has a negative raw offset", path: path)
            }
            expected += 1
        }

        var lines: [UInt8] = []
        var index: [UInt8] = []
        index.reserveCapacity(events.count * 8)
        for (i, e) in events.enumerated() {
            Self.appendLittleEndian(UInt64(endOffset) + UInt64(lines.count), to: &index)
            let more = e.rawOffset != nil && i + 1 < events.count && events[i + 1].rawOffset == e.rawOffset
            Self.encode(e, rawMore: more, into: &lines)
        }

        let startOffset = endOffset
        let startSeq = lastSeq
        do throws(StoreError) {
            try FileIO.writeAll(fd, lines, at: startOffset, path: path)
            try FileIO.writeAll(indexFD, index, at: startSeq * 8, path: indexPath)
            if sync { try FileIO.sync(fd, path: path) }
        } catch {
            rollBack(offset: startOffset, seq: startSeq, after: error)
            throw error
        }
        endOffset = startOffset + Int64(lines.count)
        lastSeq = expected - 1
        if let raw = events.last(where: { $0.rawOffset != nil })?.rawOffset { lastRawOffset = raw }
    }

    /// Makes every event appended so far durable. (The index is not synced: it is rebuilt from
    /// the transcript when it disagrees.)
    public func sync() throws(StoreError) {
        guard fd >= 0 else { throw StoreError(.closed, "transcript \(path) is closed", path: path) }
        try FileIO.sync(fd, path: path)
    }

    private func rollBack(offset: Int64, seq: Int64, after error: StoreError) {
        do throws(StoreError) {
            try FileIO.truncate(fd, to: offset, path: path)
            try FileIO.truncate(indexFD, to: seq * 8, path: indexPath)
        } catch {
            broken = StoreError(.needsRepair, "transcript \(path): a write failed and could not be undone (\(error.message)); reopen it to repair",
                                function: error.function, path: path, errno: error.errno)
        }
    }

    /// One line: the event's JSON (`seq` first, `rawOffset` last), `"rawMore":true` when more
    /// events of the same raw line follow, and a newline.
    static func encode(_ event: SequencedEvent, rawMore: Bool, into out: inout [UInt8]) {
        var object = JSONObject()
        if case .object(let o) = event.json { object = o }
        if rawMore { object.append("rawMore", .bool(true)) }
        JSONWriter.write(.object(object), into: &out)
        out.append(0x0A)
    }

    static func appendLittleEndian(_ value: UInt64, to out: inout [UInt8]) {
        for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    // MARK: Reading

    /// The events from `seq` to the last one written when this is called, streamed from the file
    /// (one line in memory at a time). A `seq` past the end gives an empty cursor.
    public func read(from seq: Int64) throws(StoreError) -> TranscriptCursor {
        try read(max(1, seq)...max(max(1, seq), lastSeq))
    }

    /// The events in `range` that exist (the range is clamped to `1...lastSeq`).
    public func read(_ range: ClosedRange<Int64>) throws(StoreError) -> TranscriptCursor {
        let lower = max(1, range.lowerBound)
        let upper = min(lastSeq, range.upperBound)
        guard lower <= upper else { return TranscriptCursor.empty(path: path) }
        let offset = try indexEntry(lower)
        return try TranscriptCursor(path: path, offset: offset, firstSeq: lower, lastSeq: upper, limit: endOffset)
    }

    /// One event.
    public func event(seq: Int64) throws(StoreError) -> SequencedEvent? {
        try read(seq...seq).next()
    }

    /// The offset of `seq`'s line, from the index.
    func indexEntry(_ seq: Int64) throws(StoreError) -> Int64 {
        guard indexFD >= 0 else { throw StoreError(.closed, "transcript \(path) is closed", path: path) }
        let bytes = try FileIO.read(indexFD, count: 8, at: (seq - 1) * 8, path: indexPath)
        guard bytes.count == 8 else {
            throw StoreError(.corrupt, "transcript index \(indexPath) has no entry for seq \(seq); reopen the transcript to rebuild it", path: indexPath)
        }
        var value: UInt64 = 0
        for i in 0..<8 { value |= UInt64(bytes[i]) << (8 * UInt64(i)) }
        guard value < UInt64(endOffset) else {
            throw StoreError(.corrupt, "transcript index \(indexPath): seq \(seq) points past the end; reopen the transcript to rebuild it", path: indexPath)
        }
        return Int64(value)
    }
}

/// Streams events from a transcript, in seq order, one line in memory at a time.
///
/// A cursor in the manner of GRDB's: `while let event = try cursor.next() { … }`. It opens the
/// file itself, so it outlives the `Transcript` and may be moved to another thread, and it stops
/// at the last seq that existed when it was made.
public final class TranscriptCursor {
    public let path: String
    private let fd: Int32
    private let reader: LineReader?
    /// The seq the next event must have.
    public private(set) var nextSeq: Int64
    public let lastSeq: Int64

    init(path: String, offset: Int64, firstSeq: Int64, lastSeq: Int64, limit: Int64) throws(StoreError) {
        self.path = path
        fd = try FileIO.open(path, O_RDONLY)
        reader = LineReader(fd: fd, path: path, from: offset, limit: limit)
        nextSeq = firstSeq
        self.lastSeq = lastSeq
    }

    private init(emptyAt path: String) {
        self.path = path
        fd = -1
        reader = nil
        nextSeq = 1
        lastSeq = 0
    }

    static func empty(path: String) -> TranscriptCursor { TranscriptCursor(emptyAt: path) }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// The next event, or nil after the last.
    public func next() throws(StoreError) -> SequencedEvent? {
        guard nextSeq <= lastSeq, let reader else { return nil }
        guard let line = try reader.next() else {
            throw StoreError(.corrupt, "transcript \(path) ends before seq \(nextSeq)", path: path)
        }
        let event: SequencedEvent
        do {
            event = try SequencedEvent(json: JSONParser.parse(line.bytes))
        } catch {
            throw StoreError(.corrupt, "transcript \(path): the line at byte \(line.offset) (seq \(nextSeq)) is not an event: \(error)", path: path)
        }
        guard event.seq == nextSeq else {
            throw StoreError(.corrupt, "transcript \(path): expected seq \(nextSeq) at byte \(line.offset), found \(event.seq); reopen the transcript to rebuild its index",
                             path: path)
        }
        nextSeq += 1
        return event
    }

    /// Calls `body` with each remaining event.
    public func forEach(_ body: (SequencedEvent) throws(StoreError) -> Void) throws(StoreError) {
        while let event = try next() { try body(event) }
    }

    /// The remaining events in an array (for short ranges: this loads them all).
    public func collect() throws(StoreError) -> [SequencedEvent] {
        var out: [SequencedEvent] = []
        while let event = try next() { out.append(event) }
        return out
    }

    /// The next `limit` events at most (a page of a long range).
    public func collect(limit: Int) throws(StoreError) -> [SequencedEvent] {
        var out: [SequencedEvent] = []
        while out.count < limit, let event = try next() { out.append(event) }
        return out
    }
}
