#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import NucleicSync
import NucleicSockets
import NucleicSystem
import NucleicCommandLine

/// `nucleic-bench approvals`: how long a person's answer takes to travel, through the host, the
/// shim and back, measured against a ping round trip on the same socket (docs/BENCHMARKS.md,
/// "Approvals").
enum ApprovalsBenchmark: BenchCommand {
    static let name = "approvals"
    static let summary = "approval round trips through the host, the shim and a replay agent, vs a ping round trip"
    static let usage = """
        usage: nucleic-bench approvals [--approvals N] [--pings N] [--nucleic PATH] [--keep]

        One replay session (a generated Claude fixture: --approvals Bash calls in one turn, each
        asking for a person, replay speed max) runs in a SessionHost in this process, with its
        real shim and replay agent as child processes, served by a LocalServer on a Unix socket.
        A client in this process subscribes and answers each approval "allow" the moment it
        arrives, timing:

          ping round trip            ping → pong on the same connection: the floor
          answer → reply             approvalRespond → its reply: the host has judged the answer,
                                     stored the decision and handed it to the shim
          answer → next approval     approvalRespond → the next approvalRequested: the decision
                                     through the shim to the agent's stdin, the agent's next
                                     request through the shim, the codec, the broker, the store
                                     and the socket back to the client
          host overhead              answer → next approval less the agent's own time, read from
                                     the shim's journal (its answer journalled on the way to the
                                     agent's stdin → its next request read from its stdout): what
                                     the host (daemon and shim) adds to the round trip

        Nothing asserts a time. Build with -c release.

        Options:
          --approvals N   approvals in the turn (default 2000)
          --pings N       ping round trips for the floor (default 2000)
          --nucleic PATH  the nucleic binary (shim and replay agent; default: next to this one)
          --keep          keep the temporary folders
        """

    struct Options {
        var approvals = 2_000
        var pings = 2_000
        var nucleic: String
        var keep = false

        init(_ arguments: [String]) throws {
            let args = try ArgumentParser(arguments, valued: ["approvals", "pings", "nucleic"], boolean: ["keep"], short: [:],
                                          allowsPositionals: false, usage: usage)
            approvals = try args.integer("approvals", default: approvals, in: 10...1_000_000, usage: usage)
            pings = try args.integer("pings", default: pings, in: 10...1_000_000, usage: usage)
            nucleic = args.nucleicBinary()
            keep = args.flag("keep")
        }
    }

    struct Rows {
        var ping: [Double] = []
        var reply: [Double] = []
        var nextApproval: [Double] = []
        var hostOverhead: [Double] = []
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments)
        signal(SIGPIPE, SIG_IGN)
        let rows = try runBlocking { try await measure(options) }.get()
        let floor = quantile(rows.ping, 0.5)
        func row(_ label: String, _ samples: [Double]) -> [String] {
            [label] + [0.5, 0.99, 0.999].map { Format.fixed(quantile(samples, $0) * 1e3, 3) + " ms" }
                + [Format.fixed(quantile(samples, 0.5) / floor, 1) + "×", Format.fixed(quantile(samples, 0.99) / floor, 1) + "×"]
        }
        Output.standardOutput("""
            Approval round trips: \(rows.nextApproval.count + 1) approvals answered one at a time, \(rows.ping.count) pings
            \(Format.table([
                ["", "p50", "p99", "p99.9", "p50 × ping", "p99 × ping"],
                row("ping round trip", rows.ping),
                row("answer → reply", rows.reply),
                row("answer → next approval", rows.nextApproval),
                row("host overhead", rows.hostOverhead),
            ]))
            """)
        return 0
    }

    /// The `q` quantile of `samples` (nearest rank).
    static func quantile(_ samples: [Double], _ q: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[max(0, min(sorted.count - 1, rank - 1))]
    }

    static func measure(_ options: Options) async throws -> Rows {
        let fixtureFolder = try Scratch.make("nucleic-bench-fixture")
        let fixture = fixtureFolder.root + "/approvals.jsonl"
        try ApprovalFixture.write(to: fixture, approvals: options.approvals)
        let rig = try await HostRig.make("nucleic-bench-approvals", nucleic: options.nucleic, maxRunning: 1, speed: "max")
        let socket = rig.scratch.root + "/s.sock"
        let rows = try await ResubscribeBenchmark.served(rig.host, socket: socket) {
            var rows = Rows()
            let client = try await BenchClient.connect(socket)
            defer { client.close() }
            for _ in 0..<options.pings {
                let started = monotonicSeconds()
                _ = try await client.request(.ping)
                rows.ping.append(monotonicSeconds() - started)
            }
            let id = try await rig.start(fixture, prompt: "Fetch every item.")
            try await answer(options.approvals, session: id, client: client, into: &rows)
            let journal = SessionFolder(home: rig.scratch.home.path, session: id).rawJournalPath
            rows.hostOverhead = try hostOverhead(rows.nextApproval, journal: journal)
            return rows
        }
        await rig.finish(keep: options.keep)
        if !options.keep { await fixtureFolder.remove() }
        return rows
    }

    /// Each answer's round trip less the agent's part of it: the shim journals the answer line
    /// (`in`, a `control_response`) as it writes it to the agent's stdin, and the agent's next
    /// request (`out`, a `control_request`) as it reads it from the agent's stdout, both stamped
    /// with the shim's monotonic clock.
    static func hostOverhead(_ roundTrips: [Double], journal: String) throws -> [Double] {
        let cursor = try RawJournal.records(path: journal)
        var answers: [Double] = []
        var requests: [Double] = []
        while let record = try cursor.next() {
            let line = String(decoding: record.line, as: UTF8.self)
            if record.direction == .in, line.contains(#""type":"control_response""#) { answers.append(record.t) }
            if record.direction == .out, line.contains(#""subtype":"can_use_tool""#) { requests.append(record.t) }
        }
        guard requests.count == roundTrips.count + 1, answers.count >= roundTrips.count else {
            throw BenchError(message: "the journal has \(requests.count) requests and \(answers.count) answers for \(roundTrips.count + 1) approvals")
        }
        return roundTrips.indices.map { i in roundTrips[i] - (requests[i + 1] - answers[i]) }
    }

    /// Subscribes to `id` and answers its approvals "allow" as they come, one at a time,
    /// recording each answer's reply time and the time to the next approval.
    static func answer(_ count: Int, session id: SessionID, client: BenchClient, into rows: inout Rows) async throws {
        var frames = client.connection.frames.makeAsyncIterator()
        func next() async throws -> HostMsg {
            guard let frame = await frames.next() else {
                throw BenchError(message: "the server closed the connection: \(client.connection.endReason.map { "\($0)" } ?? "no reason")")
            }
            return try WireMessages.decodeHost(frame)
        }
        try await client.connection.send(WireMessages.encode(ClientMsg(.subscribe(sessionID: id, sinceSeq: nil, verbosity: .statusOnly),
                                                                      requestID: 1_000_000)))
        // The first approval: in the snapshot when it was already pending, else pushed.
        var pending: ApprovalID?
        while pending == nil {
            let message = try await next()
            switch message.body {
            case .snapshot(_, _, let approvals, _): pending = approvals.first?.id
            case .approvalRequested(let approval) where approval.sessionID == id: pending = approval.id
            case .error(_, let text, _): throw BenchError(message: "subscribe failed: \(text)")
            default: break
            }
        }
        for index in 0..<count {
            guard let approval = pending else { break }
            let requestID = Int64(2_000_000 + index)
            let started = monotonicSeconds()
            try await client.connection.send(WireMessages.encode(ClientMsg(.approvalRespond(approvalID: approval, decision: .allow),
                                                                          requestID: requestID)))
            var replied = false
            pending = nil
            let last = index == count - 1
            while !replied || (pending == nil && !last) {
                let message = try await next()
                if message.requestID == requestID {
                    if case .error(_, let text, _) = message.body { throw BenchError(message: "approval \(index + 1) was refused: \(text)") }
                    rows.reply.append(monotonicSeconds() - started)
                    replied = true
                } else if case .approvalRequested(let next) = message.body, next.sessionID == id {
                    rows.nextApproval.append(monotonicSeconds() - started)
                    pending = next.id
                }
            }
        }
        guard rows.reply.count == count else {
            throw BenchError(message: "answered \(rows.reply.count) approvals of \(count): the host judged some itself (a rule?)")
        }
    }
}

/// A Claude Code turn of `approvals` Bash calls, each a network command (which the host never
/// lets pass without a person), each answered "allow, input unchanged", then the result.
enum ApprovalFixture {
    static func write(to path: String, approvals: Int, command: (Int) -> String = { "curl -s https://example.com/items/\($0)" }) throws {
        let file = try BufferedFile(path)
        let session = SessionFixture.sessionID
        /// `i` as 11 decimal digits: with a leading kind digit, the last group of a valid UUID.
        func digits(_ i: Int) -> String {
            let text = String(i)
            return String(repeating: "0", count: max(0, 11 - text.count)) + text
        }
        func record(_ direction: String, _ line: JSONValue) throws {
            try file.write(JSONWriter.string(JSONValue.object(["t": 0.0, "dir": .string(direction), "line": .string(JSONWriter.string(line))])))
        }
        try file.write(JSONWriter.string(JSONValue.object([
            "fixture": 1, "backend": "claude", "cli": "2.1.327",
            "argv": ["claude", "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
                     "--permission-prompt-tool", "stdio"],
            "scenario": .string("nucleic-bench approvals: \(approvals) approvals"),
        ])))
        try record("in", ["type": "control_request", "request_id": "req_1_initialize", "request": ["subtype": "initialize"]])
        try record("in", ["type": "user", "message": ["role": "user", "content": "Fetch every item."]])
        try record("out", ["type": "control_response", "response": ["subtype": "success", "request_id": "req_1_initialize",
                                                                   "response": ["commands": [], "models": []]]])
        try record("out", [
            "type": "system", "subtype": "init", "cwd": "/tmp/nucleic-fixture/repo", "session_id": .string(session),
            "tools": ["Bash"], "mcp_servers": [], "model": "claude-opus-5-5", "permissionMode": "default",
            "apiKeySource": "none", "output_style": "default", "uuid": "00000000-0000-4000-8000-100000000000",
        ])
        for i in 0..<approvals {
            let toolID = "toolu_bench_\(i)"
            let input: JSONValue = ["command": .string(command(i)), "description": "Fetch an item"]
            try record("out", [
                "type": "assistant",
                "message": ["id": .string("msg_bench_\(i)"), "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                            "content": [["type": "tool_use", "id": .string(toolID), "name": "Bash", "input": input]],
                            "stop_reason": nil, "usage": ["input_tokens": 100, "output_tokens": 1]],
                "parent_tool_use_id": nil, "session_id": .string(session), "uuid": .string("00000000-0000-4000-8000-2\(digits(i))"),
            ])
            let requestID = "00000000-0000-4000-8000-3\(digits(i))"
            try record("out", ["type": "control_request", "request_id": .string(requestID), "request": [
                "subtype": "can_use_tool", "tool_name": "Bash", "display_name": "Bash", "input": input,
                "description": "Fetch an item", "tool_use_id": .string(toolID),
            ]])
            try record("in", ["type": "control_response", "response": [
                "subtype": "success", "request_id": .string(requestID), "response": ["behavior": "allow", "updatedInput": input],
            ]])
            try record("out", [
                "type": "user",
                "message": ["role": "user", "content": [["tool_use_id": .string(toolID), "type": "tool_result", "content": "{}", "is_error": false]]],
                "parent_tool_use_id": nil, "session_id": .string(session), "uuid": .string("00000000-0000-4000-8000-4\(digits(i))"),
            ])
        }
        try record("out", [
            "type": "result", "subtype": "success", "is_error": false, "duration_ms": 1000, "duration_api_ms": 900,
            "num_turns": .int(Int64(approvals)), "result": "Done.", "stop_reason": "end_turn", "session_id": .string(session),
            "total_cost_usd": 0.01, "usage": ["input_tokens": 2000, "output_tokens": 100], "uuid": "00000000-0000-4000-8000-500000000000",
        ])
        try file.close()
    }
}
