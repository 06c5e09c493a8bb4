#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NucleicProtocol
import NucleicRemoteKit
import NucleicSystem
import NucleicCommandLine

/// `nucleic remote watch`: on a terminal, the full-screen view of `nucleic watch` (`WatchView`)
/// over the paired host's Noise link. Otherwise the attention list, pending approvals and each
/// session's transcript as it grows, printed line by line, with approvals answerable from
/// standard input. The last seq shown per session is saved, so a watch killed and
/// started again continues after it: nothing missed, nothing printed twice.
enum RemoteWatch {
    static func run(_ arguments: [String]) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], usage: RemoteCommands.usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: RemoteCommands.usage) }
        let (host, key) = try RemoteConfig.paired()
        if let terminal = Terminal.open() {
            // On a terminal: the same full-screen view as `nucleic watch`, over the Noise link.
            var options = Connection.Options(clientName: "nucleic-remote-watch", autoSubscribe: (.full, .snapshot))
            options.foreground = true
            return await WatchView(connection: Connection(host: host, identity: key, dialer: TCPDialer(), options: options), terminal: terminal).run()
        }
        let saved = RemoteConfig.loadCursors()
        let connection = Connection(host: host, identity: key, dialer: TCPDialer(),
                                    options: .init(clientName: "nucleic-remote-watch", autoSubscribe: (.full, .snapshot),
                                                   startFor: { id in saved[id].map { .after($0) } }))
        let printer = WatchPrinter(saved: saved, hostName: host.hostName)
        await connection.start()
        let lines = StandardInputLines.stream()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await state in await connection.updates() { await printer.show(state) }
            }
            group.addTask {
                // At end of input watch keeps watching (it may run in a pipe); `q` stops it.
                for await line in lines {
                    if line.trimmingWhitespace() == "q" {
                        await connection.stop()
                        break
                    }
                    await command(line, connection: connection, printer: printer)
                }
            }
        }
        return 0
    }

    static func command(_ line: String, connection: Connection, printer: WatchPrinter) async {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard let verb = words.first else { return }
        let number = words.count > 1 ? Int(words[1]) : nil
        switch verb {
        case "a", "a!", "d":
            guard let number, let id = await printer.approval(number: number) else {
                Output.standardOutput("? no approval [\(words.count > 1 ? words[1] : "")]; the numbers are those shown with !")
                return
            }
            let decision: Decision = verb == "d" ? .deny(message: words.count > 2 ? words[2] : "") : .allow
            let outcome = await connection.respond(to: id, with: decision, deliberate: verb == "a!")
            let risk = await connection.state.mirror.approvals[id]?.approval.risk
            _ = RemoteCommands.report(outcome, what: "→ [\(number)] \(verb == "d" ? "denied" : "approved") \(RemoteCommands.short(id.rawValue))",
                                      risk: risk, interactive: true)
        case "s":
            guard let number, words.count > 2, let id = await printer.session(number: number) else {
                Output.standardOutput("? s N TEXT: N is a session's number in the list")
                return
            }
            _ = RemoteCommands.report(await connection.sendInput(words[2], to: id), what: "→ sent to [\(number)]", interactive: true)
        default:
            Output.standardOutput("? commands: a N, a! N, d N [message], s N TEXT, q")
        }
    }
}

/// Prints what changed between two states, once each.
actor WatchPrinter {
    var chip: String?
    var attention: [String] = []
    var sessionNumbers: [SessionID] = []
    var approvalNumbers: [ApprovalID: Int] = [:]
    var approvalsByNumber: [Int: ApprovalID] = [:]
    var printed: Set<String> = []
    var cursors: [SessionID: Int64]

    let hostName: String

    init(saved: [SessionID: Int64], hostName: String) {
        cursors = saved
        self.hostName = hostName
    }

    func approval(number: Int) -> ApprovalID? { approvalsByNumber[number] }
    func session(number: Int) -> SessionID? { number >= 1 && number <= sessionNumbers.count ? sessionNumbers[number - 1] : nil }

    func show(_ state: RemoteState) {
        let newChip = "\(state.host?.hostName ?? hostName) · \(state.connection.chip()) · NEEDS YOU: \(state.mirror.badge)"
        if newChip != chip {
            chip = newChip
            Output.standardOutput("— \(newChip)")
        }
        let list = state.mirror.sessions.map { SessionCommands.row($0) }
        if list != attention, state.mirror.listed {
            attention = list
            sessionNumbers = state.mirror.sessions.map(\.sessionID)
            RemoteCommands.printAttention(state.mirror.sessions, numbered: true)
        }
        for summary in state.mirror.sessions {
            guard let t = state.mirror.transcripts[summary.sessionID] else { continue }
            for row in t.rows { printRow(row, summary, state) }
        }
        for card in state.mirror.approvals.values.sorted(by: { $0.approval.id < $1.approval.id }) { printCard(card, state) }
        var changed = false
        for (id, t) in state.mirror.transcripts where t.cursor > (cursors[id] ?? 0) {
            cursors[id] = t.cursor
            changed = true
        }
        if changed { try? RemoteConfig.saveCursors(cursors) }
    }

    private func once(_ key: String, _ line: @autoclosure () -> String) {
        guard printed.insert(key).inserted else { return }
        Output.standardOutput(line())
    }

    private func printRow(_ row: TranscriptRow, _ s: SessionSummary, _ state: RemoteState) {
        let key = "\(s.sessionID.rawValue):\(row.id)"
        let tag = "[\(s.title) #\(row.seq)]"
        switch row.content {
        case .started(let backend, let model): once(key, "\(tag) ▶ \(backend)\(model.map { " (\($0))" } ?? "") started")
        case .user(let text): once(key, "\(tag) you › \(text)")
        case .assistant(let text, false): once(key, "\(tag) agent › \(text)")
        case .reasoning(let text, false): once(key, "\(tag) (thinking) \(text.prefix(200))")
        case .assistant, .reasoning: break  // streaming: printed when complete
        case .tool(let tool):
            if tool.status != .writing { once(key + ":start", "\(tag) ⚙ \(tool.name) \(tool.inputSummary.prefix(200))") }
            switch tool.status {
            case .completed, .failed, .declined, .interrupted:
                let output = tool.output.split(separator: "\n").prefix(4).map { "      " + $0 }.joined(separator: "\n")
                once(key + ":end", "\(tag)   \(tool.status == .completed ? "✓" : "✗") \(tool.status.rawValue)\(tool.exitCode.map { " (exit \($0))" } ?? "")" + (output.isEmpty ? "" : "\n" + output))
            default: break
            }
        case .approval: break  // printed from the cards
        case .notice(let level, let message): once(key, "\(tag) [\(level.rawValue)] \(message)")
        case .hostError(let code, let message): once(key, "\(tag) host error \(code): \(message)")
        case .turnEnded(let isError, let stop, _): once(key, "\(tag) ■ turn ended\(isError ? " with an error" : ""): \(stop)")
        case .other(let kind): once(key, "\(tag) (\(kind))")
        }
    }

    private func printCard(_ card: ApprovalCard, _ state: RemoteState) {
        let id = card.approval.id
        let number: Int
        if let n = approvalNumbers[id] {
            number = n
        } else {
            guard card.outcome == .pending else { return }  // resolved before we ever showed it
            number = approvalNumbers.count + 1
            approvalNumbers[id] = number
            approvalsByNumber[number] = id
        }
        let title = card.approval.sessionID.flatMap { state.mirror.summary($0)?.title } ?? "?"
        let short = RemoteCommands.short(id.rawValue)
        switch card.outcome {
        case .pending:
            let input = ToolRow(toolCallID: "", name: card.approval.toolName, input: card.approval.input, status: .running).inputSummary
            let how = card.verdict.allowInline ? "a \(number) to allow" : "risky: a! \(number) to allow"
            once("card:\(id.rawValue):pending", "! [\(number)] approval \(short) · \(title) · \(card.approval.toolName) \(input.prefix(160)) [risk: \(card.approval.risk.rawValue)] — \(how), d \(number) to deny")
        case .resolved(let r):
            once("card:\(id.rawValue):done", "✓ [\(number)] approval \(short) \(r.summary)")
        case .answeredElsewhere(let message):
            once("card:\(id.rawValue):elsewhere", "✓ [\(number)] approval \(short): \(message)")
        case .withdrawn(let reason):
            once("card:\(id.rawValue):done", "– [\(number)] approval \(short) withdrawn: \(reason)")
        }
    }
}

/// Lines typed on standard input, read on a thread of their own (a blocking read never holds the
/// concurrency pool). The stream ends at end of input.
enum StandardInputLines {
    static func stream() -> AsyncStream<String> {
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        // A thread of its own: a read blocked for hours must not hold one of Dispatch's workers.
        let rc = startDetachedThread(name: "nucleic-stdin-in") {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        if rc != 0 { continuation.finish() }
        return lines
    }
}

extension String {
    func trimmingWhitespace() -> String {
        String(self.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" || $0 == "\r" }).reversed())
    }
}
