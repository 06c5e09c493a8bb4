#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NucleicProtocol

/// Opening a transcript: checks it against itself, cuts what a crash left half-done, and makes
/// the index agree with it. docs/STORE.md ("Repair") states the rules; in order:
///
/// 1. One sequential pass over the transcript, in constant memory: every complete line must
///    begin `{"seq":N,` with N its line number. The index is compared entry by entry on the way
///    and rewritten from the first entry that differs.
/// 2. An unterminated last line is torn: cut. From the first line whose seq is wrong, everything
///    to the end is cut and kept in `transcript.jsonl.damaged-<ms>` (a crash can only damage
///    the end; a bad line in the middle is corruption that a person should look at).
/// 3. The last line is parsed in full; while it does not parse, it is cut (and kept). While it
///    carries `"rawMore":true` (its raw line's group of events is incomplete), it is cut.
/// 4. The index is truncated to the lines that remain; `lastRawOffset` is found walking back.
struct TranscriptRepair {
    let fd: Int32
    let path: String
    let indexFD: Int32
    let indexPath: String

    struct State {
        var lastSeq: Int64
        var lastRawOffset: Int64?
        var end: Int64
        var report: RepairReport
    }

    func run() throws(StoreError) -> State {
        var report = RepairReport()
        let size = try FileIO.size(fd, path: path)
        report.lengthBefore = size
        var index = try IndexSync(fd: indexFD, path: indexPath)

        // 1. The pass.
        let reader = LineReader(fd: fd, path: path, from: 0, limit: size)
        var n: Int64 = 0
        var validEnd: Int64 = 0
        var damagedFrom: Int64?
        var completeEnd: Int64 = 0  // the end of the last complete line, valid or not
        while let span = try reader.nextSpan(prefixLength: 32) {
            completeEnd = span.end
            if damagedFrom != nil {
                report.damagedLines += 1
                continue
            }
            if Self.seqPrefix(span.prefix) == n + 1 {
                n += 1
                try index.add(span.offset)
                validEnd = span.end
            } else {
                damagedFrom = span.offset
                report.damagedLines += 1
            }
        }
        // 2. Torn tail.
        report.tornBytes = size - completeEnd
        try index.flush()

        // 3. The last lines, parsed in full.
        var lastEvent: (event: SequencedEvent, json: JSONValue)?
        while n > 0 {
            let start = try index.entry(n)
            let bytes = try FileIO.read(fd, count: Int(validEnd - 1 - start), at: start, path: path)
            guard let json = try? JSONParser.parse(bytes), let event = try? SequencedEvent(json: json), event.seq == n else {
                report.damagedLines += 1
                damagedFrom = start
                validEnd = start
                n -= 1
                continue
            }
            if json["rawMore"] == .bool(true) {
                report.incompleteGroupEvents += 1
                validEnd = start
                n -= 1
                continue
            }
            lastEvent = (event, json)
            break
        }

        // 4. Apply: keep the damaged lines aside, cut, and fit the index.
        if let damagedFrom, completeEnd > damagedFrom {
            report.savedTo = try Repair.saveAside(fd, path: path, from: damagedFrom, to: completeEnd)
        }
        if validEnd < size {
            try FileIO.truncate(fd, to: validEnd, path: path)
            try FileIO.sync(fd, path: path)
        }
        try index.finish(count: n)
        report.indexRewrittenFrom = index.firstRewritten
        report.lengthAfter = validEnd

        var lastRawOffset = lastEvent?.event.rawOffset
        if lastRawOffset == nil, n > 1 {
            lastRawOffset = try findLastRawOffset(before: n, lineEnd: try index.entry(n), index: index)
        }
        return State(lastSeq: n, lastRawOffset: lastRawOffset, end: validEnd, report: report)
    }

    /// Walks back from seq `seq - 1` to the first event that has a raw offset. A line is parsed
    /// only when its text contains `"rawOffset":` outside a string (inside one the quotes would
    /// be escaped), so host events are passed over cheaply.
    private func findLastRawOffset(before seq: Int64, lineEnd: Int64, index: IndexSync) throws(StoreError) -> Int64? {
        let needle = Array(#""rawOffset":"#.utf8)
        var end = lineEnd  // start of the line after
        var s = seq - 1
        while s >= 1 {
            let start = try index.entry(s)
            let bytes = try FileIO.read(fd, count: Int(end - 1 - start), at: start, path: path)
            if Self.contains(bytes, needle), let json = try? JSONParser.parse(bytes), let raw = json["rawOffset"]?.intValue {
                return raw
            }
            end = start
            s -= 1
        }
        return nil
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        var i = haystack.count - needle.count  // rawOffset is written last: search from the end
        while i >= 0 {
            if haystack[i] == needle[0], haystack[i..<(i + needle.count)].elementsEqual(needle) { return true }
            i -= 1
        }
        return false
    }

    /// N from a line beginning `{"seq":N,`; nil for anything else.
    static func seqPrefix(_ prefix: [UInt8]) -> Int64? {
        let head = Array(#"{"seq":"#.utf8)
        guard prefix.count > head.count, prefix.starts(with: head) else { return nil }
        var value: Int64 = 0
        var digits = 0
        for b in prefix[head.count...] {
            if b >= 0x30, b <= 0x39 {
                guard digits < 18 else { return nil }
                value = value * 10 + Int64(b - 0x30)
                digits += 1
            } else if b == UInt8(ascii: ",") {
                return digits > 0 ? value : nil
            } else {
                return nil
            }
        }
        return nil
    }
}

/// Compares the index with the offsets the pass finds, one entry at a time, and rewrites it
/// from the first entry that differs (reads and writes in 64 KiB pieces).
struct IndexSync {
    let fd: Int32
    let path: String
    let sizeBefore: Int64
    /// Complete entries in the file when opened.
    let existing: Int64
    /// Entries confirmed or written so far.
    private(set) var count: Int64 = 0
    /// The seq of the first entry rewritten (or cut), nil while the file agrees.
    private(set) var firstRewritten: Int64?

    private var readBuffer: [UInt8] = []
    private var readBase: Int64 = 0
    private var pending: [UInt8] = []
    private var pendingBase: Int64 = 0

    static let pieceSize = 64 * 1024

    init(fd: Int32, path: String) throws(StoreError) {
        self.fd = fd
        self.path = path
        sizeBefore = try FileIO.size(fd, path: path)
        existing = sizeBefore / 8
    }

    mutating func add(_ offset: Int64) throws(StoreError) {
        let k = count
        if firstRewritten == nil {
            if k < existing {
                if k < readBase || k >= readBase + Int64(readBuffer.count / 8) {
                    readBuffer = try FileIO.read(fd, count: Int(min(Int64(Self.pieceSize), (existing - k) * 8)), at: k * 8, path: path)
                    readBase = k
                }
                let at = Int(k - readBase) * 8
                if at + 8 <= readBuffer.count, Self.value(readBuffer, at) == UInt64(offset) {
                    count += 1
                    return
                }
            }
            firstRewritten = k + 1
            pendingBase = k
            readBuffer = []
        }
        Transcript.appendLittleEndian(UInt64(offset), to: &pending)
        count += 1
        if pending.count >= Self.pieceSize { try flush() }
    }

    mutating func flush() throws(StoreError) {
        guard !pending.isEmpty else { return }
        try FileIO.writeAll(fd, pending, at: pendingBase * 8, path: path)
        pendingBase += Int64(pending.count / 8)
        pending.removeAll(keepingCapacity: true)
    }

    /// The offset of `seq`'s line (after `flush`).
    func entry(_ seq: Int64) throws(StoreError) -> Int64 {
        let bytes = try FileIO.read(fd, count: 8, at: (seq - 1) * 8, path: path)
        guard bytes.count == 8 else { throw StoreError(.corrupt, "transcript index \(path) is shorter than it was just written", path: path) }
        return Int64(Self.value(bytes, 0))
    }

    /// Leaves exactly `n` entries.
    mutating func finish(count n: Int64) throws(StoreError) {
        try flush()
        let size = try FileIO.size(fd, path: path)
        if size != n * 8 {
            try FileIO.truncate(fd, to: n * 8, path: path)
            if firstRewritten == nil || firstRewritten! > n + 1 { firstRewritten = min(firstRewritten ?? (n + 1), n + 1) }
        }
    }

    static func value(_ bytes: [UInt8], _ at: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[at + i]) << (8 * UInt64(i)) }
        return v
    }
}
