#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NucleicProtocol

/// What opening a transcript or raw journal found at its end and fixed (docs/STORE.md, "Repair").
public struct RepairReport: Sendable, Hashable {
    /// Bytes of an unterminated last line that were cut (a write torn by a crash or a full disk).
    public var tornBytes: Int64 = 0
    /// Complete lines that were not valid where they stood (did not parse, wrong seq), moved to
    /// `savedTo`.
    public var damagedLines: Int = 0
    /// Transcript only: valid events cut because the group of events derived from one raw line
    /// was incomplete (they are derived again when the raw journal is read from `lastRawOffset`).
    public var incompleteGroupEvents: Int = 0
    /// Where the damaged lines were kept, for a person to look at.
    public var savedTo: String?
    /// Transcript only: the first seq whose index entry was missing or wrong and was rewritten
    /// (nil: the index agreed with the transcript).
    public var indexRewrittenFrom: Int64?
    /// The file's length before and after.
    public var lengthBefore: Int64 = 0
    public var lengthAfter: Int64 = 0

    public init() {}

    /// Nothing needed fixing.
    public var isClean: Bool {
        lengthBefore == lengthAfter && damagedLines == 0 && indexRewrittenFrom == nil
    }
}

enum Repair {
    /// The offset of the last newline in `[floor, end)`, scanning backwards in chunks; nil if none.
    static func lastNewline(_ fd: Int32, path: String, before end: Int64, floor: Int64 = 0) throws(StoreError) -> Int64? {
        let chunk = 64 * 1024
        var hi = end
        var buffer = [UInt8](repeating: 0, count: chunk)
        while hi > floor {
            let lo = max(floor, hi - Int64(chunk))
            let count = Int(hi - lo)
            let result: Result<Int, StoreError> = buffer.withUnsafeMutableBytes { raw in
                Result { () throws(StoreError) -> Int in
                    try FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<count]), at: lo, path: path)
                }
            }
            let n = try result.get()
            var i = min(n, count) - 1
            while i >= 0 {
                if buffer[i] == 0x0A { return lo + Int64(i) }
                i -= 1
            }
            hi = lo
        }
        return nil
    }

    /// Copies `[from, to)` of the file into `<path>.damaged-<unix ms>` and syncs it; returns its path.
    static func saveAside(_ fd: Int32, path: String, from: Int64, to: Int64) throws(StoreError) -> String {
        let aside = "\(path).damaged-\(Timestamp.now().millisecondsSince1970)"
        let out = try FileIO.open(aside, O_WRONLY | O_CREAT | O_TRUNC, mode: 0o600)
        defer { Glibc.close(out) }
        var at = from
        while at < to {
            let bytes = try FileIO.read(fd, count: Int(min(Int64(1 << 20), to - at)), at: at, path: path)
            if bytes.isEmpty { break }
            try FileIO.writeAll(out, bytes, at: at - from, path: aside)
            at += Int64(bytes.count)
        }
        try FileIO.sync(out, path: aside)
        return aside
    }
}
