#if canImport(Glibc)
import Glibc
#endif
public import NucleicProtocol

/// A transcript opened to read, without the lock and the whole-file pass of `Transcript`: what
/// a reader of a stored session (a resubscribe after a daemon restart, `events`) needs, at the
/// cost of reading the lines it sends and two index entries.
///
/// It trusts the seq index only where a check shows the index and the file agree:
///
/// - at open, the index's last entry (entry N of N) must point at a complete line that begins
///   `{"seq":N,`, parses, is not the unfinished part of a raw line's group (`"rawMore":true`)
///   and ends the file with its newline — a transcript a crash left torn, or whose index lags,
///   fails this;
/// - at each `read(from: s)`, entry s must point at a line that begins `{"seq":s,`; the cursor
///   then reads on sequentially and checks every seq it reads (`TranscriptCursor`).
///
/// When a check fails, `open` or `read` returns nil, and the caller opens the `Transcript`,
/// which repairs (docs/STORE.md, "Repair"). Events appended after the snapshot was taken are not
/// in it: it reads up to the end it found.
public final class TranscriptSnapshot {
    public let path: String
    public let indexPath: String
    /// The seq of the last event (0 when empty).
    public let lastSeq: Int64
    /// The length of the file when the snapshot was taken.
    public let endOffset: Int64

    private let fd: Int32
    private let indexFD: Int32

    /// A snapshot of the transcript in a session folder, or nil when it needs the repairing
    /// open (or is missing).
    public static func open(folder: String) -> TranscriptSnapshot? {
        open(path: FileIO.join(folder, Transcript.fileName), indexPath: FileIO.join(folder, Transcript.indexFileName))
    }

    public static func open(path: String, indexPath: String) -> TranscriptSnapshot? {
        guard let fd = try? FileIO.open(path, O_RDONLY) else { return nil }
        guard let indexFD = try? FileIO.open(indexPath, O_RDONLY) else {
            Glibc.close(fd)
            return nil
        }
        guard let size = try? FileIO.size(fd, path: path), let indexSize = try? FileIO.size(indexFD, path: indexPath),
              let last = Self.checkedLastSeq(fd: fd, path: path, size: size, indexFD: indexFD, indexPath: indexPath, indexSize: indexSize)
        else {
            Glibc.close(fd)
            Glibc.close(indexFD)
            return nil
        }
        return TranscriptSnapshot(path: path, indexPath: indexPath, lastSeq: last, endOffset: size, fd: fd, indexFD: indexFD)
    }

    private init(path: String, indexPath: String, lastSeq: Int64, endOffset: Int64, fd: Int32, indexFD: Int32) {
        self.path = path
        self.indexPath = indexPath
        self.lastSeq = lastSeq
        self.endOffset = endOffset
        self.fd = fd
        self.indexFD = indexFD
    }

    deinit {
        Glibc.close(fd)
        Glibc.close(indexFD)
    }

    /// The events from `seq` to the last, streamed; an empty cursor past the end. Nil when the
    /// index's entry for `seq` does not point at that seq's line.
    public func read(from seq: Int64) -> TranscriptCursor? {
        let first = max(1, seq)
        guard first <= lastSeq else { return TranscriptCursor.empty(path: path) }
        guard let offset = entry(first), lineBegins(at: offset, seq: first) else { return nil }
        return try? TranscriptCursor(path: path, offset: offset, firstSeq: first, lastSeq: lastSeq, limit: endOffset)
    }

    private func entry(_ seq: Int64) -> Int64? {
        Self.entry(seq, indexFD: indexFD, indexPath: indexPath, end: endOffset)
    }

    private func lineBegins(at offset: Int64, seq: Int64) -> Bool {
        guard let prefix = try? FileIO.read(fd, count: 32, at: offset, path: path) else { return false }
        return TranscriptRepair.seqPrefix(prefix) == seq
    }

    /// N when the index holds N entries and the last one checks out (see the type's comment).
    private static func checkedLastSeq(fd: Int32, path: String, size: Int64, indexFD: Int32, indexPath: String, indexSize: Int64) -> Int64? {
        guard indexSize % 8 == 0 else { return nil }
        let n = indexSize / 8
        if n == 0 { return size == 0 ? 0 : nil }
        guard let start = entry(n, indexFD: indexFD, indexPath: indexPath, end: size),
              let line = try? FileIO.read(fd, count: Int(size - start), at: start, path: path),
              line.last == UInt8(ascii: "\n"), !line.dropLast().contains(UInt8(ascii: "\n")),
              let json = try? JSONParser.parse(Array(line.dropLast())),
              let event = try? SequencedEvent(json: json), event.seq == n,
              json["rawMore"] != .bool(true)
        else { return nil }
        return n
    }

    private static func entry(_ seq: Int64, indexFD: Int32, indexPath: String, end: Int64) -> Int64? {
        guard let bytes = try? FileIO.read(indexFD, count: 8, at: (seq - 1) * 8, path: indexPath), bytes.count == 8 else { return nil }
        let value = IndexSync.value(bytes, 0)
        return value < UInt64(end) ? Int64(value) : nil
    }
}
