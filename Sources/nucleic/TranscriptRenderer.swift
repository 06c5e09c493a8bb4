import NucleicCommandLine
import NucleicProtocol

/// Events as a person reads them in a terminal: one or a few lines each, partial deltas left out
/// (the complete text follows them), long outputs cut.
struct TranscriptRenderer {
    var maximumOutputLines = 6
    /// The session's worktree: paths in approval cards are shown relative to it.
    var cwd: String?
    /// The folder the agent reports working in, when it differs (a replayed recording's).
    var reportedCwd: String?
    /// The session's handle: approvals are named `HANDLE.N`, N counting the session's approvals
    /// from its first event (as the host numbers them). Nil: approvals are named by their id.
    var sessionHandle: String?
    private var approvalsSeen = 0

    init(cwd: String? = nil, sessionHandle: String? = nil) {
        self.cwd = cwd
        self.sessionHandle = sessionHandle
    }

    /// The line(s) for one event; call it for every event from the first, in order, so
    /// approvals get their handles.
    mutating func render(_ event: AgentEvent) -> String? {
        switch event {
        case .sessionStarted(let s):
            let model = s.model.map { " (\($0))" } ?? ""
            // Where it runs now: a replayed session reports the recording's folder.
            guard let cwd, s.cwd != cwd else { return "▶ \(s.backend)\(model) started in \(s.cwd ?? "?")" }
            return "▶ \(s.backend)\(model) started in \(cwd)" + (s.cwd.map { " (recorded in \($0))" } ?? "")
        case .userInput(let text):
            return "you › \(text)"
        case .assistantText(let text, false):
            return "agent › \(text)"
        case .reasoning(let text, false):
            return "  (thinking) \(cut(text, lines: 2))"
        case .assistantText, .reasoning, .toolCallInputDelta, .toolCallOutputDelta, .usage, .diffUpdated:
            return nil
        case .toolCallStarted(let call):
            return "⚙ \(call.name) \(summary(of: call.input))"
        case .toolCallCompleted(let result):
            let mark = result.status == .completed ? "✓" : "✗"
            let output = result.output.map { $0.isEmpty ? "" : "\n" + indent(cut($0, lines: maximumOutputLines)) } ?? ""
            return "  \(mark) \(result.status.rawValue)\(result.exitCode.map { " (exit \($0))" } ?? "")\(output)"
        case .approvalRequested(let a):
            // The card every client shows (ApprovalContent): the diff, the command, the options.
            let card = ApprovalContent(a, cwd: cwd, otherRoots: reportedCwd.map { [$0] } ?? [], maximumLines: 24)
            let kind = a.question == nil ? "approval" : "question"
            approvalsSeen += 1
            let name = a.handle ?? sessionHandle.map { "\($0).\(approvalsSeen)" } ?? String(a.id.rawValue.prefix(13))
            let head = "? \(kind) \(name): \(card.headline)" + (a.question == nil ? "  [risk: \(Colour.risk(a.risk.rawValue))]" : "")
            return ([head] + SessionCommands.paintCard(a, Array(card.lines.dropFirst())).map { "    " + $0 }).joined(separator: "\n")
        case .approvalResolved(let r):
            let who = r.decidedBy == "recorded" ? "as recorded" : "by \(r.decidedByLabel ?? r.decidedBy)"
            return "  → \(describe(r.decision)) \(who)"
        case .approvalWithdrawn(_, let reason):
            return "  → approval withdrawn: \(reason)"
        case .statusChanged(let status, let reason):
            return "  [\(status.rawValue)\(reason.map { ": \($0)" } ?? "")]"
        case .runFinished(let run):
            var parts = [run.isError ? "✗ run ended: \(run.stopReason)" : "■ run finished"]
            if let usage = run.usage { parts.append("\(usage.inputTokens) in / \(usage.outputTokens) out tokens") }
            if let cost = run.costUSD { parts.append("$\(cost)") }
            return parts.joined(separator: " · ")
        case .notice(let level, let message, _):
            return "! \(level.rawValue): \(message)"
        case .error(let code, let message, _):
            return "!! host error (\(code)): \(message)"
        case .unknown(let raw, let nativeKind):
            return "  (unknown \(nativeKind ?? "message")) \(cut(raw, lines: 1))"
        }
    }

    func describe(_ decision: Decision) -> String {
        if case .allowModified(let input) = decision { return "allowed with a modified input \(summary(of: input))" }
        return decision.summary
    }

    /// A tool input in one line: the command or path when there is one, else compact JSON.
    func summary(of input: JSONValue) -> String {
        for key in ["command", "cmd", "file_path", "path", "pattern", "url"] {
            if let value = input[key] {
                let text = value.arrayValue.map { $0.map(\.textOrJSON).joined(separator: " ") } ?? value.textOrJSON
                return cut(text, lines: 1)
            }
        }
        return cut(JSONWriter.string(input), lines: 1)
    }

    private func cut(_ text: String, lines: Int) -> String {
        var kept = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(lines + 1).map { line -> String in
            line.count > 160 ? String(line.prefix(160)) + "…" : String(line)
        }
        if kept.count > lines {
            kept = Array(kept.prefix(lines))
            kept.append("…")
        }
        return kept.joined(separator: "\n")
    }

    private func indent(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
    }
}
