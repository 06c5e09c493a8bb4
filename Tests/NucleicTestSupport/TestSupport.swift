public import Foundation
public import NucleicAdapters
public import NucleicProtocol

/// Test support shared by the adapter and end-to-end tests: fixtures, independent counts, seeded randomness.

/// A recorded agent stream (docs/FIXTURES.md), read for tests.
public struct Fixture: Sendable {
    public struct Record: Sendable {
        public var t: Double
        public var direction: String  // "out", "in", "err"
        public var line: String

        public init(t: Double, direction: String, line: String) {
            self.t = t
            self.direction = direction
            self.line = line
        }
    }

    public var name: String
    public var header: JSONValue
    public var records: [Record]

    public var backend: String { header["backend"]?.stringValue ?? "" }
    public var scenario: String { header["scenario"]?.stringValue ?? name }
    public var outLines: [String] { records.filter { $0.direction == "out" }.map(\.line) }
    public var inLines: [String] { records.filter { $0.direction == "in" }.map(\.line) }

    /// The repository's `Fixtures/` folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// Every fixture of one backend, by file name without extension.
    public static func all(_ backend: String) throws -> [Fixture] {
        let folder = root.appendingPathComponent(backend)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return try names.filter { $0.hasSuffix(".jsonl") }.sorted().map { try load(folder.appendingPathComponent($0)) }
    }

    /// The folders of one backend's recordings: `<backend>` (the pinned release) and any
    /// `<backend>-<version>` (an earlier release, kept so that both stay tested; docs/DRIFT.md).
    public static func folders(_ backend: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return names.filter { $0 == backend || $0.hasPrefix(backend + "-") }.sorted()
    }

    /// Every fixture of a backend, in every one of its folders, as `folder/name` (what `at` reads).
    public static func paths(_ backend: String) -> [String] {
        folders(backend).flatMap { folder in ((try? all(folder)) ?? []).map { "\(folder)/\($0.name)" } }
    }

    /// The fixture at `folder/name` under `Fixtures/`.
    public static func at(_ path: String) throws -> Fixture {
        try load(root.appendingPathComponent(path + ".jsonl"))
    }

    public static func named(_ backend: String, _ name: String) throws -> Fixture {
        try load(root.appendingPathComponent(backend).appendingPathComponent(name + ".jsonl"))
    }

    public static func load(_ url: URL) throws -> Fixture {
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
    public func replay(_ codec: inout some AgentCodec) -> [AgentEvent] {
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

    /// The agent's lines as one byte stream, each ended by a newline: what a framer is fed.
    public var outStream: [UInt8] { outLines.flatMap { Array($0.utf8) + [0x0A] } }

    /// Replays the agent's lines as a framer cut them from `outStream` (`outputs`) through
    /// `codec`, each host line observed where the recording has it: the same events as
    /// `replay(_:)`, whatever the framing.
    public func replay(_ outputs: [LineFramer.Output], _ codec: inout some AgentCodec) -> [AgentEvent] {
        // The host lines observed before each agent line.
        var hostBefore: [[String]] = [[]]
        for record in records {
            switch record.direction {
            case "out": hostBefore.append([])
            case "in": hostBefore[hostBefore.count - 1].append(record.line)
            default: break
            }
        }
        var events: [AgentEvent] = []
        let now = Timestamp(millisecondsSince1970: 0)
        for (index, output) in outputs.enumerated() {
            for line in hostBefore[index] { events += codec.observeHostLine(Array(line.utf8), now: now).events }
            guard case .line(let line) = output else { continue }
            events += codec.receive(line: line, now: now).events
        }
        for line in hostBefore[outputs.count...].joined() { events += codec.observeHostLine(Array(line.utf8), now: now).events }
        return events
    }
}

public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Approval ids 0000…0001, 0000…0002, … so replays are deterministic.
public final class CountingIDs: @unchecked Sendable {  // mutated only under `lock`
    private let lock = NSLock()
    private var next = 0
    public init() {}
    public func make() -> ApprovalID {
        lock.lock(); defer { lock.unlock() }
        next += 1
        let digits = String(next)
        return ApprovalID("00000000-0000-7000-8000-" + String(repeating: "0", count: 12 - digits.count) + digits)
    }
}

/// Event counts that tests compare with counts derived independently from raw lines.
public struct EventCounts: Equatable, Sendable, CustomStringConvertible {
    public var approvalsRequested = 0
    public var toolCallsStarted: [String] = []
    public var toolCallsCompleted: [String] = []
    public var runs: [Bool] = []  // isError of each runFinished, in order
    public var errors = 0

    public init(_ events: [AgentEvent]) {
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

    public init(approvals: Int, started: [String], completed: [String], runs: [Bool], errors: Int = 0) {
        approvalsRequested = approvals
        toolCallsStarted = started
        toolCallsCompleted = completed
        self.runs = runs
        self.errors = errors
    }

    public var description: String {
        "approvals \(approvalsRequested), started \(toolCallsStarted), completed \(toolCallsCompleted), runs(isError) \(runs), errors \(errors)"
    }
}

/// Feeds `bytes` to a framer in pieces of random size (1…max) and returns the lines.
public func frameInRandomChunks(_ bytes: [UInt8], maxChunk: Int, using rng: inout some RandomNumberGenerator) -> [LineFramer.Output] {
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
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    /// Seeded from a name (a fixture's path, a test's case): the same seed in every run.
    public init(seedFrom name: String) { state = stableHash(name) }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// 64-bit FNV-1a of `text`'s UTF-8 bytes. Unlike `hashValue`, which Swift seeds afresh in every
/// process, it is the same in every run, so a failure seeded from it replays.
public func stableHash(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xCBF2_9CE4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash &*= 0x0000_0100_0000_01B3
    }
    return hash
}

/// Counts derived from an agent's raw stdout lines, independently of the codecs, so that a test
/// comparing events never only confirms the codec with itself.
public enum RawCounts {
    /// Claude Code: `can_use_tool` requests; tool_use ids (assistant blocks and streamed block
    /// starts) in first-seen order; tool_result ids; `result` lines' is_error.
    public static func claude(_ lines: [String]) -> EventCounts {
        var approvals = 0
        var started: [String] = []
        var completed: [String] = []
        var runs: [Bool] = []
        for line in lines {
            guard let m = try? JSONParser.parse(line) else { continue }
            switch m["type"]?.stringValue {
            case "control_request" where m["request"]?["subtype"]?.stringValue == "can_use_tool":
                approvals += 1
                if let id = m["request"]?["tool_use_id"]?.stringValue, !started.contains(id) { started.append(id) }
            case "stream_event" where m["event"]?["content_block"]?["type"]?.stringValue == "tool_use":
                if let id = m["event"]?["content_block"]?["id"]?.stringValue, !started.contains(id) { started.append(id) }
            case "assistant":
                for block in m["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_use" {
                    if let id = block["id"]?.stringValue, !started.contains(id) { started.append(id) }
                }
            case "user":
                for block in m["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_result" {
                    if let id = block["tool_use_id"]?.stringValue { completed.append(id) }
                }
            case "result":
                runs.append(m["is_error"]?.boolValue ?? false)
            default: continue
            }
        }
        return EventCounts(approvals: approvals, started: started, completed: completed, runs: runs)
    }

    /// Codex app-server: approval and question requests; commandExecution / fileChange items
    /// started and completed; `turn/completed` statuses other than completed as errors.
    public static func codex(_ lines: [String]) -> EventCounts {
        var approvals = 0
        var started: [String] = []
        var completed: [String] = []
        var runs: [Bool] = []
        let toolItems: Set<String> = ["commandExecution", "fileChange", "mcpToolCall", "webSearch"]
        for line in lines {
            guard let m = try? JSONParser.parse(line), let method = m["method"]?.stringValue else { continue }
            switch method {
            case _ where m["id"] != nil && (method.hasSuffix("/requestApproval") || method.hasSuffix("/requestUserInput")):
                approvals += 1
            case "item/started":
                if let item = m["params"]?["item"], toolItems.contains(item["type"]?.stringValue ?? ""), let id = item["id"]?.stringValue {
                    started.append(id)
                }
            case "item/completed":
                if let item = m["params"]?["item"], toolItems.contains(item["type"]?.stringValue ?? ""), let id = item["id"]?.stringValue {
                    completed.append(id)
                }
            case "turn/completed":
                runs.append(m["params"]?["turn"]?["status"]?.stringValue != "completed")
            default: continue
            }
        }
        return EventCounts(approvals: approvals, started: started, completed: completed, runs: runs)
    }
}


/// The built `nucleic` executable the tests run: beside the test bundle (same build folder and
/// configuration), else the checkout's debug build.
public enum NucleicBinary {
    public static let path: String = {
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("nucleic").path
        if FileManager.default.isExecutableFile(atPath: besideTests) { return besideTests }
        return Fixture.root.deletingLastPathComponent().appendingPathComponent(".build/debug/nucleic").path
    }()
}

/// Runs the git CLI in `directory` (tests may use git to set up and check repositories; the
/// product never does) and returns its stdout; throws when git fails.
public enum TestGit {
    @discardableResult
    public static func run(_ arguments: [String], in directory: String) throws -> String {
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw FixtureError("git \(arguments.joined(separator: " ")) failed") }
        return String(decoding: data, as: UTF8.self)
    }
}
