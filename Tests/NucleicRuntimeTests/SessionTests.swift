import Foundation
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// Storage in memory: the seam between the Session actor and the store's files.
final class MemoryStorage: SessionStorage, @unchecked Sendable {  // all state under `lock`
    private let lock = NSLock()
    private var raw: [(RawDirection, String)] = []
    private var events: [SequencedEvent] = []

    func appendRaw(_ direction: RawDirection, line: [UInt8], t: Double) throws -> Int64 {
        lock.lock(); defer { lock.unlock() }
        raw.append((direction, String(decoding: line, as: UTF8.self)))
        return Int64(raw.count - 1)
    }

    func appendEvents(_ new: [SequencedEvent]) throws {
        lock.lock(); defer { lock.unlock() }
        for (i, event) in new.enumerated() where event.seq != Int64(events.count + i) + 1 {
            throw FixtureError("seq \(event.seq) where \(events.count + i + 1) was due")
        }
        events += new
    }

    var lastSeq: Int64 { lock.lock(); defer { lock.unlock() }; return Int64(events.count) }
    var allEvents: [SequencedEvent] { lock.lock(); defer { lock.unlock() }; return events }
    var rawLines: [(RawDirection, String)] { lock.lock(); defer { lock.unlock() }; return raw }
}

@Suite struct SessionTests {
    func replayLaunch(_ fixture: String) -> AgentLaunch {
        AgentLaunch(executable: NucleicBinary.path, arguments: ["replay-agent", Fixture.root.appendingPathComponent(fixture).path, "--speed", "max"],
                    environment: ProcessInfo.processInfo.environment, workingDirectory: FileManager.default.temporaryDirectory.path)
    }

    /// Waits for the next event matching `predicate` on a subscription (one iterator per stream).
    func next(_ events: inout AsyncStream<SequencedEvent>.Iterator, _ predicate: (AgentEvent) -> Bool) async -> SequencedEvent? {
        while let event = await events.next() {
            if predicate(event.event) { return event }
        }
        return nil
    }

    @Test func aReplayedSessionIsAnsweredAndFinishes() async throws {
        let storage = MemoryStorage()
        let session = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(), storage: storage)
        var events = await session.subscribe().makeAsyncIterator()
        try await session.start(replayLaunch("claude/tool-allow.jsonl"),
                                options: SessionStartOptions(prompt: "Create hello.txt containing hello.", cwd: "/tmp"))
        guard case .approvalRequested(let approval)? = await next(&events, { $0.kind == "approvalRequested" })?.event else {
            Issue.record("no approval"); return
        }
        #expect(await session.status == .awaitingApproval)
        try await session.respond(approval.id, .allow, decidedBy: "user:test")
        await #expect(throws: SessionError.self) { try await session.respond(approval.id, .deny(message: "late"), decidedBy: "device:x") }
        _ = await next(&events, { $0.kind == "runFinished" })
        #expect(await session.status == .finished)
        await session.stop()
        #expect(await session.status == .finished)

        let recorded = storage.allEvents
        #expect(recorded.map(\.seq) == Array(1...Int64(recorded.count)))
        let kinds = recorded.map(\.event.kind)
        #expect(kinds.filter { $0 == "approvalResolved" }.count == 1)
        #expect(kinds.filter { $0 == "statusChanged" }.count >= 3)
        #expect(!kinds.contains("error"), "\(recorded)")
        // Every agent event points at the raw line it came from.
        #expect(recorded.filter { $0.event.kind == "toolCallStarted" }.allSatisfy { $0.rawOffset != nil })
        let raw = storage.rawLines
        #expect(raw.contains { $0.0 == .in && $0.1.contains(#""behavior":"allow""#) })
        #expect(raw.filter { $0.0 == .out }.count == (try Fixture.named("claude", "tool-allow")).outLines.count)
    }

    @Test func theSecondAnswerGetsAlreadyResolvedNamingTheFirst() async throws {
        let session = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(), storage: MemoryStorage())
        var events = await session.subscribe().makeAsyncIterator()
        try await session.start(replayLaunch("claude/deny-continue.jsonl"), options: SessionStartOptions(prompt: "x", cwd: "/tmp"))
        guard case .approvalRequested(let approval)? = await next(&events, { $0.kind == "approvalRequested" })?.event else { return }
        try await session.respond(approval.id, .deny(message: "use the test db"), decidedBy: "device:1", label: "Ana's iPhone")
        do {
            try await session.respond(approval.id, .allow, decidedBy: "user:me")
            Issue.record("a second answer was taken")
        } catch {
            #expect(error.code == .alreadyResolved && error.message.contains("Ana's iPhone"))
        }
        await session.stop()
    }

    @Test func anAgentThatDiesIsAnErrorWithItsStderrTail() async throws {
        let storage = MemoryStorage()
        let session = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(), storage: storage)
        let launch = AgentLaunch(executable: "/bin/sh", arguments: ["-c", "read line; echo 'fatal: out of cheese' >&2; kill -9 $$"],
                                 environment: ProcessInfo.processInfo.environment, workingDirectory: "/tmp")
        try await session.start(launch, options: SessionStartOptions(prompt: "hi", cwd: "/tmp"))
        await session.untilExited()
        #expect(await session.status == .error)
        let errors = storage.allEvents.compactMap { if case .error(let code, let message, _) = $0.event { (code, message) } else { nil } }
        #expect(errors.count == 1)
        #expect(errors.first?.0 == "agentExited")
        #expect(errors.first?.1.contains("SIGKILL") == true && errors.first?.1.contains("out of cheese") == true, "\(errors)")
        #expect(storage.rawLines.contains { $0.0 == .err && $0.1 == "fatal: out of cheese" })
        await #expect(throws: SessionError.self) { try await session.send(prompt: "are you there?") }
    }

    @Test func malformedAgentOutputIsRecordedAndTheSessionGoesOn() async throws {
        let storage = MemoryStorage()
        let session = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(), storage: storage)
        let script = #"read a; echo 'not json'; echo '{"type":"result","subtype":"success","is_error":false,"result":"ok"}'; read b"#
        let launch = AgentLaunch(executable: "/bin/sh", arguments: ["-c", script], environment: [:], workingDirectory: "/tmp")
        var events = await session.subscribe().makeAsyncIterator()
        try await session.start(launch, options: SessionStartOptions(prompt: "hi", cwd: "/tmp"))
        _ = await next(&events, { $0.kind == "runFinished" })
        #expect(await session.status == .finished)
        await session.stop()
        let kinds = storage.allEvents.map(\.event.kind)
        #expect(kinds.contains("error") && kinds.contains("runFinished"))
    }
}
