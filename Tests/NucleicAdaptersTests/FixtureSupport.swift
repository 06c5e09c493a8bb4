import Foundation
import NucleicAdapters
import NucleicProtocol

/// A recorded agent stream (docs/FIXTURES.md), read for tests.
struct Fixture {
    struct Record {
        var t: Double
        var direction: String  // "out", "in", "err"
        var line: String
    }

    var name: String
    var header: JSONValue
    var records: [Record]

    var backend: String { header["backend"]?.stringValue ?? "" }
    var scenario: String { header["scenario"]?.stringValue ?? name }
    var outLines: [String] { records.filter { $0.direction == "out" }.map(\.line) }
    var inLines: [String] { records.filter { $0.direction == "in" }.map(\.line) }

    /// The repository's `Fixtures/` folder.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Every fixture of one backend, by file name without extension.
    static func all(_ backend: String) throws -> [Fixture] {
        let folder = root.appendingPathComponent(backend)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return try names.filter { $0.hasSuffix(".jsonl") }.sorted().map { try load(folder.appendingPathComponent($0)) }
    }

    static func named(_ backend: String, _ name: String) throws -> Fixture {
        try load(root.appendingPathComponent(backend).appendingPathComponent(name + ".jsonl"))
    }

    static func load(_ url: URL) throws -> Fixture {
        let text = try String(contentsOf: url, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard !lines.isEmpty else { throw FixtureError("\(url.path) is empty") }
        let header = try JSONParser.parse(lines.removeFirst())
        let records = try lines.map { line -> Record in
            let v = try JSONParser.parse(line)
            guard let dir = v["dir"]?.stringValue, let text = v["line"]?.stringValue else { throw FixtureError("bad record in \(url.path): \(line)") }
            return Record(t: v["t"]?.doubleValue ?? 0, direction: dir, line: text)
        }
        return Fixture(name: url.deletingPathExtension().lastPathComponent, header: header, records: records)
    }

    /// Replays the fixture through a codec: agent lines decoded, host lines observed, in order.
    func replay(_ codec: inout some AgentCodec) -> [AgentEvent] {
        var events: [AgentEvent] = []
        let now = Timestamp(millisecondsSince1970: 0)
        for record in records {
            switch record.direction {
            case "out": events += codec.receive(line: Array(record.line.utf8), now: now).events
            case "in": events += codec.observeHostLine(Array(record.line.utf8), now: now).events
            default: break
            }
        }
        return events
    }
}

struct FixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Approval ids 0000…0001, 0000…0002, … so replays are deterministic.
final class CountingIDs: @unchecked Sendable {  // mutated only under `lock`
    private let lock = NSLock()
    private var next = 0
    func make() -> ApprovalID {
        lock.lock(); defer { lock.unlock() }
        next += 1
        let digits = String(next)
        return ApprovalID("00000000-0000-7000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits)
    }
}

/// Event counts that tests compare with counts derived independently from raw lines.
struct EventCounts: Equatable, CustomStringConvertible {
    var approvalsRequested = 0
    var toolCallsStarted: [String] = []
    var toolCallsCompleted: [String] = []
    var runs: [Bool] = []  // isError of each runFinished, in order
    var errors = 0

    init(_ events: [AgentEvent]) {
        for event in events {
            switch event {
            case .approvalRequested: approvalsRequested += 1
            case .toolCallStarted(let call): toolCallsStarted.append(call.toolCallID)
            case .toolCallCompleted(let result): toolCallsCompleted.append(result.toolCallID)
            case .runFinished(let run): runs.append(run.isError)
            case .error: errors += 1
            default: break
            }
        }
    }

    init(approvals: Int, started: [String], completed: [String], runs: [Bool], errors: Int = 0) {
        approvalsRequested = approvals
        toolCallsStarted = started
        toolCallsCompleted = completed
        self.runs = runs
        self.errors = errors
    }

    var description: String {
        "approvals \(approvalsRequested), started \(toolCallsStarted), completed \(toolCallsCompleted), runs(isError) \(runs), errors \(errors)"
    }
}

/// Feeds `bytes` to a framer in pieces of random size (1…max) and returns the lines.
func frameInRandomChunks(_ bytes: [UInt8], maxChunk: Int, using rng: inout some RandomNumberGenerator) -> [LineFramer.Output] {
    var framer = LineFramer()
    var out: [LineFramer.Output] = []
    var i = 0
    while i < bytes.count {
        let n = min(bytes.count - i, Int.random(in: 1...maxChunk, using: &rng))
        out += framer.feed(bytes[i..<(i + n)])
        i += n
    }
    if let last = framer.finish() { out.append(last) }
    return out
}

/// SplitMix64: a reproducible generator for fuzz-style tests.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
