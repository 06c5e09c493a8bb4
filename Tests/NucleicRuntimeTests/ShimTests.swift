import Foundation
import Glibc
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import NucleicTestSupport
import Testing

/// The per-session shim on its own: its wire messages, its journal, its adoption lock, its
/// orphan grace, and the Session's backpressure on the journal it writes.
@Suite struct ShimTests {
    /// A session folder with a journal (header only), as the host makes before starting a shim.
    func sessionFolderWithHeader() throws -> (root: String, files: ShimFiles) {
        let root = makeTemporaryDirectory()
        let folder = root + "/s"
        mkdir(folder, 0o700)
        try RawJournal(path: ShimFiles(folder: folder).journal,
                       creatingWith: RawJournal.Header(backend: "claude", cli: "test", argv: ["sh"], scenario: "shim")).close()
        return (root, ShimFiles(folder: folder))
    }

    /// Ends what a failed test may have left (the agent's group and the shim), then removes the
    /// folder.
    func cleanUp(_ root: String, _ files: ShimFiles) {
        LeftoverShims.end(folder: files.folder)
        try? FileManager.default.removeItem(atPath: root)
    }

    func launch(_ files: ShimFiles, _ script: String, grace: Double? = nil) async throws -> ShimLink {
        try await ShimLink.launch(ShimLaunch(executable: NucleicBinary.path, orphanGrace: grace), folder: files.folder,
                                  agent: AgentLaunch(executable: "/bin/sh", arguments: ["-c", script],
                                                     environment: ProcessInfo.processInfo.environment, workingDirectory: "/tmp"))
    }

    /// Waits on the link's wake-ups until `condition` holds (or the shim hangs up).
    func until(_ link: ShimLink, _ condition: (ShimLink) -> Bool) async -> Bool {
        if condition(link) { return true }
        for await _ in link.wakeups where condition(link) { return true }
        return condition(link)
    }

    func records(_ files: ShimFiles) throws -> [RawRecord] {
        var all: [RawRecord] = []
        try RawJournal.records(path: files.journal).forEach { all.append($0) }
        return all
    }

    // MARK: Pure parts

    @Test func everyMessageSurvivesTheWire() throws {
        let exit = ShimExit(status: .signaled(SIGKILL), stderrTail: "bye\n", journalEnd: 4096)
        let messages: [ShimMessage] = [
            .hello, .line(#"{"type":"user"}"#), .closeStdin, .signal(SIGINT), .terminate(graceMS: 1500), .release,
            .state(journalStart: 10, journalEnd: 12, agentPID: 345, exit: nil),
            .state(journalStart: 10, journalEnd: 12, agentPID: 345, exit: exit),
            .journal(end: 99), .exit(ShimExit(status: .exited(3), stderrTail: "", journalEnd: 7)),
        ]
        for message in messages {
            let line = message.wireLine
            #expect(line.last == 0x0A && !line.dropLast().contains(0x0A), "one line: \(message)")
            #expect(ShimMessage(json: try JSONParser.parse(Array(line.dropLast()))) == message)
        }
        var buffer = Array("{\"op\":\"hello\"}\n{\"op\":\"release\"}\n{\"op\":\"clo".utf8)
        #expect(ShimMessage.takeLines(from: &buffer).map { String(decoding: $0, as: UTF8.self) } == [#"{"op":"hello"}"#, #"{"op":"release"}"#])
        #expect(String(decoding: buffer, as: UTF8.self) == #"{"op":"clo"#, "the incomplete line stays")
        #expect(ShimMessage.takeLines(from: &buffer).isEmpty)
        // Fed byte by byte and in random chunks, the same messages come out.
        let stream = messages.flatMap(\.wireLine)
        var generator = SeededGenerator(seed: 9)
        for maxChunk in [1, 7, 64] {
            var pending: [UInt8] = []
            var decoded: [ShimMessage] = []
            var index = 0
            while index < stream.count {
                let size = maxChunk == 1 ? 1 : Int.random(in: 1...maxChunk, using: &generator)
                pending += stream[index..<min(stream.count, index + size)]
                index += size
                decoded += ShimMessage.takeLines(from: &pending).compactMap { try? ShimMessage(json: JSONParser.parse($0)) }
            }
            #expect(decoded == messages && pending.isEmpty, "chunks of at most \(maxChunk)")
        }
        #expect(ShimMessage(json: ["op": "nonsense"]) == nil)
        #expect(ShimMessage(json: ["op": "line"]) == nil, "a line without text is refused")
    }

    @Test func aTranscriptRestoresTheLifecycle() {
        let ask = { (id: String, question: Bool) -> AgentEvent in
            .approvalRequested(ApprovalRequest(
                id: ApprovalID(id), toolCallID: nil, toolName: "Bash", input: [:], risk: .execute, capabilities: .claude,
                question: question ? StructuredQuestion(questions: [.init(question: "Which?", options: [.init(label: "A")])]) : nil))
        }
        var events: [AgentEvent] = [
            .statusChanged(status: .running, reason: nil), ask("a", false), .statusChanged(status: .awaitingApproval, reason: nil),
            ask("b", true), ask("c", false),
            .approvalResolved(ApprovalResolution(approvalID: ApprovalID("a"), decision: .allow, decidedBy: "user:me")),
            .approvalWithdrawn(approvalID: ApprovalID("c"), reason: "gone"),
        ]
        var lifecycle = SessionLifecycle(restoring: events, status: .queued)
        #expect(lifecycle.status == .awaitingApproval)
        #expect(lifecycle.pending == [ApprovalID("b"): true])
        // It goes on as a lifecycle that lived through the events would.
        #expect(lifecycle.apply(.event(.approvalResolved(ApprovalResolution(approvalID: ApprovalID("b"), decision: .allow, decidedBy: "u"))))
                == .statusChanged(status: .running, reason: nil))
        events += [.runFinished(RunFinished(isError: true, stopReason: "api_error", result: "boom")),
                   .statusChanged(status: .error, reason: "api_error")]
        lifecycle = SessionLifecycle(restoring: events, status: .queued)
        #expect(lifecycle.status == .error && lifecycle.pending.isEmpty && lifecycle.errorReason == "api_error")
        #expect(SessionLifecycle(restoring: [], status: .finished).status == .finished)
    }

    // MARK: The shim process

    @Test func theShimJournalsBothWaysAndKeepsTheExitUntilReleased() async throws {
        let (root, files) = try sessionFolderWithHeader()
        defer { cleanUp(root, files) }
        let script = #"echo '{"n":1}'; read line; echo "got $line" >&2; exit 7"#
        var first: ShimLink? = try await launch(files, script)
        // Adopted: no one else can adopt it, in this process or another.
        #expect(throws: ShimError.self) { try ShimLink.adopt(files) }
        #expect(first!.send(lines: ["hello"]))
        #expect(await until(first!) { $0.exit != nil })
        let exit = try #require(first!.exit)
        #expect(exit.status == .exited(7))
        #expect(exit.stderrTail.contains("got hello"))
        #expect(first!.durableEnd == exit.journalEnd)
        let journal = try records(files)
        #expect(journal.map(\.direction) .contains(.in) && journal.contains { $0.direction == .out && $0.text == #"{"n":1}"# })
        #expect(journal.contains { $0.direction == .err && $0.text == "got hello" })
        #expect(journal.last.map { $0.offset < exit.journalEnd } == true)
        #expect(FileManager.default.fileExists(atPath: files.exit))

        // Hung up without a release: the shim keeps the exit for the next daemon.
        first!.close()
        first = nil
        var second: ShimLink?
        #expect(await eventually { second = try? ShimLink.adopt(files); return second != nil })
        let again = try #require(second)
        #expect(again.exit == exit, "the next daemon hears the same exit")
        again.send(.release)
        #expect(await eventually { access(files.socket, F_OK) != 0 }, "released, the shim leaves")
        again.close()
        #expect((try? ShimLink.adopt(files)) == nil, "nothing answers there any more")
    }

    @Test func anAgentWithoutADaemonForTheGraceIsEnded() async throws {
        let (root, files) = try sessionFolderWithHeader()
        defer { cleanUp(root, files) }
        // (The grace runs from the shim's start while no daemon is connected: on a loaded machine
        // it may end the agent before this link is even made; either way it must end it.)
        let link = try await launch(files, "exec sleep 600", grace: 1.5)
        link.close()
        #expect(await eventually { FileManager.default.fileExists(atPath: files.exit) }, "ended after the grace")
        var later: ShimLink?
        #expect(await eventually { later = try? ShimLink.adopt(files); return later != nil })
        #expect(later?.exit?.status == .signaled(SIGINT))
        later?.send(.release)
        #expect(await eventually { access(files.socket, F_OK) != 0 })
    }

    @Test func aSlowHostHoldsTheReaderBackNotTheMemory() async throws {
        let (root, files) = try sessionFolderWithHeader()
        defer { cleanUp(root, files) }
        let count = 3000
        let script = #"i=0; while [ $i -lt \#(count) ]; do echo "{\"type\":\"x\",\"i\":$i}"; i=$((i+1)); done; read x"#
        let storage = try FileSessionStorage(folder: SessionFolder(path: files.folder),
                                             header: RawJournal.readHeader(path: files.journal), ownsJournal: false)
        let session = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(), storage: storage)
        let gate = Gate()
        await session.setBackpressure { _ in await gate.wait() }
        try await session.start(AgentLaunch(executable: "/bin/sh", arguments: ["-c", script],
                                            environment: ProcessInfo.processInfo.environment, workingDirectory: "/tmp"),
                                options: SessionStartOptions(prompt: nil, cwd: "/tmp"),
                                shim: ShimLaunch(executable: NucleicBinary.path), folder: files.folder)
        // The agent wrote everything: it is all in the journal, not in anyone's memory.
        #expect(await eventually { ((try? records(files)) ?? []).filter { $0.direction == .out }.count == count })
        let held = await session.lastSeq
        #expect(held < Int64(Session.batchSize) + 10, "the reader stopped after one batch: \(held)")
        await gate.open()
        var done = false
        for _ in 0..<3000 where !done {
            done = await session.lastSeq >= Int64(count)
            if !done { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(done)
        let events = try storage.events(from: 1)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)))
        #expect(events.filter { $0.rawOffset != nil }.count >= count, "every line became an event")
        await session.stop(grace: .milliseconds(500))
        storage.close()
    }

    /// A daemon that recorded the agent's exit and died before releasing the shim: the next one
    /// sees from the transcript (its events point at the shim's exit record) that the exit is in
    /// already, records nothing, and releases the shim.
    @Test func anExitAlreadyRecordedIsNotRecordedAgain() async throws {
        let (root, files) = try sessionFolderWithHeader()
        defer { cleanUp(root, files) }
        var first: ShimLink? = try await launch(files, #"echo '{"type":"x"}'; exit 3"#)
        #expect(await until(first!) { $0.exit != nil })
        let exit = try #require(first?.exit)
        let at = try #require(exit.recordOffset)
        #expect(try records(files).contains { $0.offset == at && $0.direction == .err && $0.text.contains("exited with code 3") })
        first?.close()
        first = nil
        let storage = try FileSessionStorage(folder: SessionFolder(path: files.folder), header: RawJournal.readHeader(path: files.journal),
                                             ownsJournal: false)
        defer { storage.close() }
        try storage.appendEvents([SequencedEvent(seq: 1, ts: .now(), event: .statusChanged(status: .error, reason: "the agent exited with code 3"),
                                                 rawOffset: at)])
        var link: ShimLink?
        #expect(await eventually { link = try? ShimLink.adopt(files); return link != nil })
        let session = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(), storage: storage, status: .error)
        await session.adopt(try #require(link), transcript: try storage.events(from: 1))
        #expect(await session.lastSeq == 1, "nothing recorded twice")
        #expect(await !session.isRunning)
        #expect(await eventually { access(files.socket, F_OK) != 0 }, "released")
    }

    /// The window "recorded, not yet sent": a daemon records an answer, then dies before the line
    /// reaches the shim. The next daemon finds the approval answered in the transcript but pending
    /// in the journal, and sends the answer (once); the agent goes on.
    @Test func anAnswerRecordedButNeverSentIsSentOnAdoption() async throws {
        let (root, files) = try sessionFolderWithHeader()
        defer { cleanUp(root, files) }
        let fixture = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path
        let launch = AgentLaunch(executable: NucleicBinary.path, arguments: ["replay-agent", fixture, "--speed", "max"],
                                 environment: ProcessInfo.processInfo.environment, workingDirectory: "/tmp")
        let header = try RawJournal.readHeader(path: files.journal)
        var storage = try FileSessionStorage(folder: SessionFolder(path: files.folder), header: header, ownsJournal: false)
        let first = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(), storage: storage)
        try await first.start(launch, options: SessionStartOptions(prompt: "Create hello.txt", cwd: "/tmp"),
                              shim: ShimLaunch(executable: NucleicBinary.path), folder: files.folder)
        #expect(await eventually { ((try? storage.events(from: 1)) ?? []).contains { $0.event.kind == "approvalRequested" } })
        let asked = try #require(try storage.events(from: 1).compactMap { if case .approvalRequested(let r) = $0.event { r } else { nil } }.first)
        // The first daemon records the answer, and dies before sending it.
        let resolution = ApprovalResolution(approvalID: asked.id, decision: .allow, decidedBy: "user:test")
        try storage.appendEvents([SequencedEvent(seq: try storage.lastSeq + 1, ts: .now(), event: .approvalResolved(resolution))])
        await first.detach()
        storage.close()

        // The next daemon.
        storage = try FileSessionStorage(folder: SessionFolder(path: files.folder), header: header, ownsJournal: false)
        var link: ShimLink?
        #expect(await eventually { link = try? ShimLink.adopt(files); return link != nil })
        let transcript = try storage.events(from: 1)
        let primed = transcript.compactMap { if case .approvalRequested(let r) = $0.event { r.id } else { nil } }
        let ids = PrimedIDs(primed)
        let second = try Session(id: .make(), backend: "claude", codec: ClaudeCodec(makeApprovalID: { ids.next() }), storage: storage,
                                 status: .awaitingApproval)
        await second.adopt(try #require(link), transcript: transcript)
        #expect(await second.pendingApprovals.isEmpty, "the rebuilt codec took the answer")
        #expect(await eventually { ((try? storage.events(from: 1)) ?? []).contains { $0.event.kind == "runFinished" } },
                "the agent got the answer and finished its turn")
        let events = try storage.events(from: 1)
        #expect(events.map(\.seq) == Array(1...Int64(events.count)))
        #expect(events.filter { $0.event.kind == "approvalResolved" }.count == 1)
        #expect(try records(files).filter { $0.direction == .in && $0.text.contains("\"behavior\"") }.count == 1, "one answer reached the agent")
        #expect(await second.status == .finished)
        await second.stop(grace: .milliseconds(500))
        storage.close()
    }
}

/// Approval ids handed out in a given order (what the host primes an adopted codec with).
final class PrimedIDs: @unchecked Sendable {  // under `lock`
    private let lock = NSLock()
    private var ids: [ApprovalID]
    init(_ ids: [ApprovalID]) { self.ids = ids }
    func next() -> ApprovalID {
        lock.lock(); defer { lock.unlock() }
        return ids.isEmpty ? ApprovalID.make() : ids.removeFirst()
    }
}

/// Closed until opened; then every wait returns at once.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
