import Foundation
import Testing
import NucleicAdapters
import NucleicProtocol

/// `AcpCodec` against the scripted reference agent (Tests/Peers/acp_reference_agent.py, on the
/// pinned ACP Python SDK), a real process on pipes. The test plays the host: it writes the codec's
/// lines and answers the agent's client requests itself.
@Suite(.enabled(if: ProcessInfo.processInfo.environment["NUCLEIC_ACP_PYTHON"] != nil, "needs NUCLEIC_ACP_PYTHON (scripts/peers.sh)"))
struct AcpReferenceAgentTests {
    final class Agent {
        let process = Process()
        let stdin = Pipe()
        let stdout = Pipe()
        var buffer: [UInt8] = []
        var codec = AcpCodec()
        var events: [AgentEvent] = []
        let worktree: URL

        init() throws {
            let env = ProcessInfo.processInfo.environment
            let root = env["NUCLEIC_REPO_ROOT"] ?? FileManager.default.currentDirectoryPath
            worktree = FileManager.default.temporaryDirectory.appendingPathComponent("acp-ref-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: worktree, withIntermediateDirectories: true)
            process.executableURL = URL(fileURLWithPath: env["NUCLEIC_ACP_PYTHON"]!)
            process.arguments = [root + "/Tests/Peers/acp_reference_agent.py"]
            process.standardInput = stdin
            process.standardOutput = stdout
            try process.run()
            // Never hang the suite on a stuck agent.
            let p = process
            DispatchQueue.global().asyncAfter(deadline: .now() + 30) { if p.isRunning { p.terminate() } }
        }

        deinit {
            if process.isRunning { process.terminate() }
            try? FileManager.default.removeItem(at: worktree)
        }

        var now: Timestamp { Timestamp(millisecondsSince1970: 1_000) }

        func write(_ out: CodecOutput) {
            events += out.events
            for line in out.lines { stdin.fileHandleForWriting.write(Data((line + "\n").utf8)) }
        }

        func readLine() -> [UInt8]? {
            while true {
                if let i = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(buffer[..<i])
                    buffer.removeSubrange(...i)
                    return line
                }
                let data = stdout.fileHandleForReading.availableData
                if data.isEmpty { return nil }
                buffer += data
            }
        }

        /// Reads and feeds lines until `stop` holds for the events so far; serves client requests with `serve`.
        func run(until stop: ([AgentEvent]) -> Bool, serve: (AcpCodec.ClientRequest, inout AcpCodec) -> CodecOutput = { r, c in
            c.refuse(r.id, code: -32601, message: "not served")
        }, onApproval: (ApprovalRequest, inout AcpCodec) throws -> CodecOutput = { _, _ in CodecOutput() }) throws {
            while !stop(events), let line = readLine() {
                let out = codec.receive(line: line, now: now)
                write(out)
                for case .approvalRequested(let request) in out.events { write(try onApproval(request, &codec)) }
                while let request = codec.clientRequests.first { write(serve(request, &codec)) }
            }
        }

        func start(_ prompt: String) throws {
            write(codec.start(SessionStartOptions(prompt: prompt, cwd: worktree.path), now: now))
        }
    }

    static func finished(_ events: [AgentEvent]) -> RunFinished? {
        for case .runFinished(let r) in events { return r }
        return nil
    }

    @Test func everyUpdateKind() throws {
        let agent = try Agent()
        try agent.start("hello")
        try agent.run(until: { Self.finished($0) != nil })
        let kinds = agent.events.map(\.kind)
        #expect(kinds.first == "sessionStarted")
        #expect(agent.events.contains(.reasoning(text: "thinking", isPartial: true)))
        #expect(agent.events.contains(.assistantText(text: "Hello world.", isPartial: false)))
        #expect(agent.events.contains(.toolCallCompleted(ToolResult(toolCallID: "t1", status: .completed, output: "a.txt"))))
        #expect(agent.events.contains(.notice(level: .info, message: "plan:\n[completed] look\n[pending] fix", code: "plan")))
        #expect(agent.events.contains(.notice(level: .info, message: "commands: /init", code: "availableCommands")))
        #expect(agent.codec.currentMode == "plan")
        #expect(agent.codec.contextSize == 200_000)
        #expect(agent.events.contains { if case .unknown(_, "_reference/odd") = $0 { true } else { false } })
        #expect(Self.finished(agent.events) == RunFinished(isError: false, stopReason: "end_turn", result: "Hello world.", usage: Usage(inputTokens: 10, outputTokens: 5)))
    }

    @Test func allowedPermissionWritesTheFileThroughTheHost() throws {
        let agent = try Agent()
        try agent.start("[[scenario:permission]]")
        let root = agent.worktree.path
        try agent.run(until: { Self.finished($0) != nil }, serve: { request, codec in
            #expect(request.method == "fs/write_text_file")
            let path = request.params["path"]?.stringValue ?? ""
            guard path.hasPrefix(root + "/") else { return codec.refuse(request.id, code: -32602, message: "outside the worktree") }
            try? (request.params["content"]?.stringValue ?? "").write(toFile: path, atomically: true, encoding: .utf8)
            return codec.respond(to: request.id, result: [:])
        }, onApproval: { approval, codec in
            #expect(approval.toolKind == .edit)
            return try codec.send(.decide(approval.id, .allowAlways(scope: .toolThisSession)), now: Timestamp(millisecondsSince1970: 1_000))
        })
        #expect(try String(contentsOfFile: root + "/a.txt", encoding: .utf8) == "hi\n")
        #expect(Self.finished(agent.events) == RunFinished(isError: false, stopReason: "end_turn", result: "wrote a.txt"))
    }

    @Test func deniedPermissionWritesNothing() throws {
        let agent = try Agent()
        try agent.start("[[scenario:permission]]")
        try agent.run(until: { Self.finished($0) != nil }, onApproval: { approval, codec in
            try codec.send(.decide(approval.id, .deny(message: "no")), now: Timestamp(millisecondsSince1970: 1_000))
        })
        #expect(!FileManager.default.fileExists(atPath: agent.worktree.path + "/a.txt"))
        #expect(agent.events.contains(.toolCallCompleted(ToolResult(toolCallID: "t2", status: .failed))))
        #expect(Self.finished(agent.events)?.result == "not allowed")
    }

    @Test func malformedLineIsAnErrorEventAndTheTurnGoesOn() throws {
        let agent = try Agent()
        try agent.start("[[scenario:malformed]]")
        try agent.run(until: { Self.finished($0) != nil })
        #expect(agent.events.contains { if case .error("malformedLine", _, _) = $0 { true } else { false } })
        #expect(Self.finished(agent.events)?.isError == false)
    }

    @Test func refusedOutsidePathReachesTheAgent() throws {
        let agent = try Agent()
        try agent.start("[[scenario:outside]]")
        try agent.run(until: { Self.finished($0) != nil }, serve: { request, codec in
            codec.refuse(request.id, code: -32602, message: "outside the worktree")
        })
        #expect(Self.finished(agent.events)?.result?.hasPrefix("refused") == true)
    }

    @Test func agentErrorEndsTheTurnAsFailed() throws {
        let agent = try Agent()
        try agent.start("[[scenario:error]]")
        try agent.run(until: { Self.finished($0) != nil })
        #expect(Self.finished(agent.events)?.stopReason == "failed")
    }

    @Test func cancelMidTurnThenAFollowUp() throws {
        let agent = try Agent()
        try agent.start("[[scenario:slow]]")
        try agent.run(until: { $0.contains(.assistantText(text: "working", isPartial: true)) })
        agent.write(try agent.codec.send(.interrupt, now: agent.now))
        try agent.run(until: { Self.finished($0) != nil })
        #expect(Self.finished(agent.events)?.stopReason == "interrupted")
        agent.events = []
        agent.write(try agent.codec.send(.prompt("again"), now: agent.now))
        try agent.run(until: { Self.finished($0) != nil })
        #expect(Self.finished(agent.events)?.isError == false)
    }
}
