public import NucleicProtocol
public import NucleicRemoteKit

/// The screen of `nucleic watch` as a pure function of the state and the terminal's size:
/// exactly `height` lines, none wider than `width` columns, coloured or not.
///
/// Wide terminals (≥ `twoColumnWidth`) show the list beside the card; narrower ones stack them
/// in one column, the card first cut when space runs out (the list keeps at least its NEEDS YOU
/// rows).
public enum WatchScreen {
    public static let twoColumnWidth = 110

    public static func render(_ state: WatchState, width: Int, height: Int, color: Bool, utcOffsetSeconds: Int = 0) -> [String] {
        lines(state, width: max(10, width), height: max(4, height), utcOffsetSeconds: utcOffsetSeconds).map { $0.rendered(color: color) }
    }

    static func lines(_ state: WatchState, width: Int, height: Int, utcOffsetSeconds: Int) -> [ScreenLine] {
        let header = headerLines(state, width: width, utcOffsetSeconds: utcOffsetSeconds)
        let footer = footerLines(state, width: width)
        let middle = max(0, height - header.count - footer.count)
        var body: [ScreenLine]
        switch state.mode {
        case .transcript(let id): body = scrolled(transcriptLines(state, id, width: width), state.scroll, middle, title: "transcript · \(title(state, id))")
        case .diff(let id): body = scrolled(diffLines(state), state.scroll, middle, title: "diff · \(title(state, id))")
        case .help: body = scrolled(helpLines, state.scroll, middle, title: "keys")
        default: body = mainLines(state, width: width, height: middle)
        }
        body = Array(body.prefix(middle))
        while body.count < middle { body.append(ScreenLine()) }
        return (header + body + footer).map { $0.clipped(width) }
    }

    // MARK: - Header and footer

    static func headerLines(_ state: WatchState, width: Int, utcOffsetSeconds: Int) -> [ScreenLine] {
        let c = state.remote.connection
        let chipStyle: TextStyle = switch c {
        case .connected: .green
        case .reconnecting: .yellow
        default: .red
        }
        var line = ScreenLine("nucleic watch", .bold)
        if let host = state.remote.host { line.append(" · \(host.hostName)") }
        line.append(" · ")
        line.append(c.chip(utcOffsetSeconds: utcOffsetSeconds), chipStyle)
        let badge = state.remote.mirror.badge
        line.append(" · ")
        line.append("NEEDS YOU \(badge)", badge > 0 ? .boldYellow : .dim)
        var lines = [line]
        if !c.isLive {
            var why = ""
            if case .reconnecting(_, _, let reason) = c { why = reason }
            if case .hostOffline(_, _, let reason) = c { why = reason }
            lines.append(ScreenLine("actions disabled until the connection is back" + (why.isEmpty ? "" : " (\(why))"), .yellow))
        } else if let banner = state.remote.banner {
            lines.append(ScreenLine(banner, .red))
        }
        return lines
    }

    static func footerLines(_ state: WatchState, width: Int) -> [ScreenLine] {
        let status: ScreenLine
        switch state.mode {
        case .prompt(let p): status = ScreenLine([(p.label, .bold), (p.text, .plain), ("▏", .plain)])
        case .confirmDiscard(let id):
            status = ScreenLine("discard \(title(state, id))? its work is kept on its branch · y discards, any other key keeps it", .boldRed)
        case .chooseStrategy(let id): status = ScreenLine("integrate \(title(state, id)): s squash · r rebase · m merge · any other key cancels", .bold)
        case .chooseScope: status = ScreenLine("allow always: press the scope's number · any other key cancels", .bold)
        case .armed(_, let decision):
            let what = switch decision {
            case .allowModified: "allow with the edited input"
            case .allowAlways: "allow always"
            default: "allow"
            }
            status = ScreenLine("press ! to \(what) this risky call · any other key cancels", .boldRed)
        default:
            if let flash = state.flash {
                status = ScreenLine(flash, .yellow)
            } else if !state.marked.isEmpty {
                status = ScreenLine("\(state.marked.count) marked · a allows them all · d denies them all · space marks/unmarks · esc clears", .boldYellow)
            } else {
                status = ScreenLine("")
            }
        }
        let keys: String = switch state.mode {
        case .transcript, .diff, .help: "↑↓ j k scroll · space/PgDn page · q back"
        case .prompt: "enter send · esc cancel"
        default:
            width >= 120
                ? "a allow · A always · e edit · d deny · 1-9 answer · s send · i interrupt · ⏎ log · D diff · I integrate · x discard · ? · q quit"
                : width >= 76 ? "a allow · d deny · 1-9 answer · s send · i interrupt · ⏎ transcript · D diff · ? help · q quit"
                : "a d 1-9 s i ⏎ D · ? help · q quit"
        }
        return [status, ScreenLine(keys, .dim)]
    }

    // MARK: - The list and the card

    static func mainLines(_ state: WatchState, width: Int, height: Int) -> [ScreenLine] {
        if width >= twoColumnWidth {
            let listWidth = width * 11 / 20
            let cardWidth = width - listWidth - 1
            let list = listLines(state, width: listWidth)
            let card = cardLines(state, width: cardWidth, maxLines: height)
            var out: [ScreenLine] = []
            for i in 0..<max(list.count, card.count) {
                var left = i < list.count ? list[i].clipped(listWidth) : ScreenLine()
                left.append(String(repeating: " ", count: max(0, listWidth - left.width)) + " ")
                if i < card.count { left.spans += card[i].clipped(cardWidth).spans }
                out.append(left)
            }
            return out
        }
        let list = listLines(state, width: width)
        // The card gets what the list does not need, but the list keeps its NEEDS YOU rows.
        let needsYouRows = state.groups.first { $0.bucket == .needsYou }.map { $0.rows.count + 1 } ?? 0
        let card = cardLines(state, width: width, maxLines: max(3, height - min(list.count, max(needsYouRows, 3)) - 1))
        let listRoom = max(0, height - card.count - (card.isEmpty ? 0 : 1))
        var shown = Array(list.prefix(listRoom))
        if list.count > listRoom, listRoom > 0 {
            shown[listRoom - 1] = ScreenLine("… \(list.count - listRoom + 1) more lines", .dim)
        }
        return shown + (card.isEmpty ? [] : [ScreenLine()] + card)
    }

    static func listLines(_ state: WatchState, width: Int) -> [ScreenLine] {
        let groups = state.groups
        guard !groups.isEmpty else {
            if !state.remote.mirror.listed { return [ScreenLine("waiting for the session list…", .dim)] }
            return [ScreenLine("No sessions yet.", .bold), ScreenLine("Start one: nucleic start \"fix the flaky test\" --project NAME", .dim)]
        }
        let narrow = width < 80
        let titleWidth = min(28, max(8, width / (narrow ? 3 : 5)))
        let projectWidth = narrow ? 0 : min(14, max(6, width / 10))
        var lines: [ScreenLine] = []
        for group in groups {
            let style: TextStyle = group.bucket == .needsYou ? .boldYellow : .bold
            let label = "\(group.title) (\(group.rows.count)) "
            lines.append(ScreenLine([(label, style), (String(repeating: "─", count: max(0, min(width, 60) - Columns.width(label))), .dim)]))
            for row in group.rows {
                if width < 60 {
                    // Too narrow for a row and its activity side by side: the activity goes under it.
                    var first = rowLine(row, state, width: width, titleWidth: max(8, width - 32), projectWidth: 0, activity: false)
                    first.spans = first.trimmed().spans
                    lines.append(first)
                    let activity = Columns.printable(row.activity.split(separator: "\n").first.map(String.init) ?? "")
                    lines.append(ScreenLine("       " + activity, row.summary.status.bucket == .needsYou ? .yellow : .dim))
                } else {
                    lines.append(rowLine(row, state, width: width, titleWidth: titleWidth, projectWidth: projectWidth))
                }
            }
        }
        return lines
    }

    static func rowLine(_ row: WatchRow, _ state: WatchState, width: Int, titleWidth: Int, projectWidth: Int, activity shown: Bool = true) -> ScreenLine {
        let s = row.summary
        let selected = state.cursor == s.sessionID
        let glyphStyle: TextStyle = switch s.status.bucket {
        case .needsYou: s.status == .error ? .boldRed : .boldYellow
        case .running: .cyan
        case .done: .green
        }
        let marked = state.marked.contains { state.remote.mirror.approvals[$0]?.approval.sessionID == s.sessionID }
        var line = ScreenLine(selected ? "›" : " ", .bold)
        line.append(marked ? "*" : " ", .boldYellow)
        line.append(row.glyph, glyphStyle)
        line.append(" " + Columns.fit(s.displayName, 3) + " ", .dim)
        line.append(Columns.fit(Columns.printable(s.title), titleWidth), selected ? .bold : .plain)
        if projectWidth > 0 { line.append(" " + Columns.fit(s.projectName, projectWidth), .dim) }
        line.append(" " + Columns.fit(row.elapsedSeconds.map(elapsed) ?? "", 4) + " ", .dim)
        if !shown {
            if let d = s.diffStat, d.insertions + d.deletions > 0 {
                line.append("+\(d.insertions)", .green)
                line.append("/−\(d.deletions)", .red)
            }
            if row.pending > 0 { line.append(" [\(row.pending)]", .boldYellow) }
            return line
        }
        var right = ScreenLine()
        if let d = s.diffStat, d.insertions + d.deletions > 0 {
            right.append(" +\(d.insertions)", .green)
            right.append("/−\(d.deletions)", .red)
        }
        if row.pending > 0 { right.append(" [\(row.pending)]", .boldYellow) }
        let room = width - line.width - right.width
        let activity = Columns.printable(row.activity.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? "")
        line.append(room > 0 ? Columns.fit(activity, room) : "", s.status.bucket == .needsYou ? .yellow : .plain)
        line.spans += right.spans
        return line
    }

    /// `42s`, `12m`, `3h`, `2d`.
    public static func elapsed(_ seconds: Int64) -> String {
        if seconds < 60 { return "\(seconds)s" }
        if seconds < 3600 { return "\(seconds / 60)m" }
        if seconds < 86_400 { return "\(seconds / 3600)h" }
        return "\(seconds / 86_400)d"
    }

    /// The selected approval in full, in a box: what it runs or writes, the risk and its reason,
    /// what the backend can take, the keys (the risky second key among them).
    static func cardLines(_ state: WatchState, width: Int, maxLines: Int) -> [ScreenLine] {
        guard let card = state.card, card.outcome == .pending else {
            if let held = state.selection.held, !state.remote.mirror.pendingApprovals.isEmpty {
                let n = state.remote.mirror.pendingApprovals.count
                return [ScreenLine("No approval in \(title(state, held)) · n: the next of \(n) waiting", .dim)]
            }
            let waiting = state.listed.filter { $0.status.bucket == .needsYou }
            if waiting.isEmpty { return state.groups.isEmpty ? [] : [ScreenLine("Nothing needs you.", .dim)] }
            return [ScreenLine("No approval waiting; \(waiting.count) session\(waiting.count == 1 ? "" : "s") need\(waiting.count == 1 ? "s" : "") you (s to send a follow-up).", .dim)]
        }
        let request = card.approval
        let verdict = card.verdict
        let summary = request.sessionID.flatMap { state.remote.mirror.summary($0) }
        let risky = verdict.needsDeliberateStep
        let content = ApprovalContent(request, cwd: summary?.worktree, maximumLines: 400)
        let others = state.remote.mirror.pendingApprovals.count - 1
        var top = ScreenLine("┌ ", .dim)
        top.append("⚠ ", .boldYellow)
        top.append(summary.map { "\(Columns.printable($0.title)) (\($0.displayName)) · " } ?? "")
        top.append(Columns.printable(content.headline), .bold)
        top.append(" · risk ")
        top.append(request.risk.rawValue, risky ? .boldRed : .plain)
        if state.marked.contains(request.id) { top.append(" · marked", .boldYellow) }
        if others > 0 { top.append(" · \(others) more waiting", .dim) }

        var body: [ScreenLine] = content.body.map { bodyLine(Columns.printable($0)) }
        body += ruleLines(state.rules[request.id])
        if !verdict.allowAlwaysScopes.isEmpty {
            let scopes = verdict.allowAlwaysScopes.enumerated().map { "\($0.offset + 1) \(scopeText($0.element, request))" }
            body.append(ScreenLine([("A would add: ", .dim), (scopes.joined(separator: " · "), state.mode == .chooseScope(request.id) ? .inverse : .plain)]))
        }
        var can: [String] = []
        if !verdict.isQuestion { can.append(verdict.canModifyInput ? "edit input: yes" : "edit input: no") }
        can.append(verdict.allowAlwaysScopes.isEmpty ? "always: no" : "always: yes")
        body.append(ScreenLine("backend \(summary?.backend ?? "?") · " + can.joined(separator: " · "), .dim))
        if case .failed(let message) = card.action { body.append(ScreenLine("not sent: \(message)", .red)) }
        if card.action == .sending { body.append(ScreenLine("sending…", .yellow)) }
        if !state.answers.isEmpty {
            body.append(ScreenLine("chosen: " + state.answers.keys.sorted().map { "\($0) \(state.answers[$0]!.joined(separator: ", "))" }.joined(separator: "; "), .cyan))
        }

        var keys = ScreenLine("└ ", .dim)
        if verdict.isQuestion {
            let item = request.question?.questions.first { state.answers[$0.question] == nil }
            let count = item?.options.count ?? 0
            keys.append(count > 0 ? "1–\(count) answer" : "", .bold)
            if item?.allowsOther == true { keys.append(" · o your own answer", .bold) }
            keys.append(" · d deny")
        } else if risky {
            if case .armed(request.id, _) = state.mode {
                keys.append("! to allow · any other key cancels", .inverse)
            } else {
                keys.append("risky (\(request.risk.rawValue)): a then ! to allow", .boldRed)
                keys.append(" · d deny")
            }
        } else {
            keys.append("a allow", .bold)
            if !verdict.allowAlwaysScopes.isEmpty { keys.append(" · A always") }
            if verdict.canModifyInput { keys.append(" · e edit") }
            keys.append(" · d deny")
        }
        let room = max(1, maxLines - 2)
        if body.count > room {
            let cut = body.count - room + 1
            body = Array(body.prefix(room - 1)) + [ScreenLine("… \(cut) more lines", .dim)]
        }
        let bar = ScreenLine("│ ", .dim)
        return [top] + body.map { ScreenLine(bar.spans.map { ($0.text, $0.style) } + $0.spans.map { ($0.text, $0.style) }) } + [keys]
    }

    /// What the host's rules say of the request: the risk's reason, the rules that match (and
    /// whether they counted), why a person is asked.
    static func ruleLines(_ explanation: CardRules?) -> [ScreenLine] {
        switch explanation {
        case nil: return [ScreenLine("rules: asking the host…", .dim)]
        case .unavailable(let why): return [ScreenLine("rules: not shown (\(Columns.printable(why)))", .dim)]
        case .verdict(let v):
            var lines: [ScreenLine] = []
            if let reason = v.riskReasons.first {
                lines.append(ScreenLine([("risk \(v.risk.rawValue): ", .dim), (Columns.printable(reason), .yellow)]))
            }
            if v.rules.isEmpty {
                lines.append(ScreenLine([("rules: ", .dim), ("none match", .plain)]))
            }
            for (i, match) in v.rules.enumerated() {
                var line = ScreenLine(i == 0 ? "rules: " : "       ", .dim)
                line.append("\(match.behavior.rawValue) \(Columns.printable(match.rule))", match.behavior == .deny ? .red : .green)
                // Whether it counted comes before the part matched: a narrow card cuts the end.
                if !match.honoured { line.append(" not counted" + (match.note.map { " (\(Columns.printable($0)))" } ?? ""), .yellow) }
                line.append(" · matches \(Columns.printable(match.part))")
                lines.append(line)
            }
            if !v.reasons.isEmpty {
                lines.append(ScreenLine([("asks: ", .dim), (Columns.printable(v.reasons.joined(separator: "; ")), .plain)]))
            }
            return lines
        }
    }

    static func bodyLine(_ text: String) -> ScreenLine {
        if text.hasPrefix("+++") || text.hasPrefix("---") { return ScreenLine(text, .bold) }
        if text.hasPrefix("+") { return ScreenLine(text, .green) }
        if text.hasPrefix("-") { return ScreenLine(text, .red) }
        if text.hasPrefix("@@") { return ScreenLine(text, .cyan) }
        if text.hasPrefix("$ ") { return ScreenLine(text, .bold) }
        if text.hasPrefix("why: ") { return ScreenLine(text, .yellow) }
        return ScreenLine(text)
    }

    static func scopeText(_ scope: ApprovalScope, _ request: ApprovalRequest) -> String {
        switch scope {
        case .exactCommandThisSession: "this command, this session"
        case .toolThisSession: "any \(request.toolName), this session"
        case .rule(let rule): "rule \(rule)"
        }
    }

    static func title(_ state: WatchState, _ id: SessionID) -> String {
        state.remote.mirror.summary(id).map { "\(Columns.printable($0.title)) (\($0.displayName))" } ?? String(id.rawValue.prefix(8))
    }

    // MARK: - Scrolled views

    /// Lines of the scrolled view the mode shows (their count does not depend on the width).
    static func contentLineCount(_ state: WatchState) -> Int {
        switch state.mode {
        case .transcript(let id): transcriptLines(state, id, width: 80).count
        case .diff: diffLines(state).count
        case .help: helpLines.count
        default: 0
        }
    }

    static func scrolled(_ lines: [ScreenLine], _ scroll: Int, _ height: Int, title: String) -> [ScreenLine] {
        let room = max(0, height - 1)
        let top = min(max(0, scroll), max(0, lines.count - room))
        let end = min(lines.count, top + room)
        let position = lines.isEmpty ? "" : " · \(top + 1)–\(end) of \(lines.count)"
        return [ScreenLine([(title, .bold), (position, .dim)])] + lines[top..<end]
    }

    static func transcriptLines(_ state: WatchState, _ id: SessionID, width: Int) -> [ScreenLine] {
        guard let transcript = state.remote.mirror.transcripts[id] else { return [ScreenLine("(no transcript yet)", .dim)] }
        var out: [ScreenLine] = transcript.truncated ? [ScreenLine("… earlier events not shown", .dim)] : []
        func text(_ prefix: String, _ style: TextStyle, _ body: String) {
            for (i, line) in body.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let lead = i == 0 ? prefix : String(repeating: " ", count: Columns.width(prefix))
                out.append(ScreenLine([(lead, style), (Columns.printable(String(line)), .plain)]))
            }
        }
        for row in transcript.rows {
            switch row.content {
            case .started(let backend, let model): out.append(ScreenLine("▶ \(backend)\(model.map { " (\($0))" } ?? "") started", .dim))
            case .user(let t): text("you › ", .bold, t)
            case .assistant(let t, _): text("agent › ", .cyan, t)
            case .reasoning(let t, _): text("(thinking) ", .dim, t)
            case .tool(let tool):
                let end: String = switch tool.status {
                case .writing, .running: "…"
                default: tool.status.rawValue + (tool.exitCode.map { " (exit \($0))" } ?? "")
                }
                out.append(ScreenLine([("⚙ \(tool.name) ", .bold), (Columns.printable(tool.inputSummary), .plain), (" — \(end)", .dim)]))
                for line in tool.output.split(separator: "\n").suffix(4) { out.append(ScreenLine("    " + Columns.printable(String(line)), .dim)) }
            case .approval(let aid):
                guard let card = state.remote.mirror.approvals[aid] else { continue }
                let outcome: String = switch card.outcome {
                case .pending: "waiting"
                case .resolved(let r): r.summary
                case .answeredElsewhere(let m): m
                case .withdrawn(let reason): "withdrawn: \(reason)"
                }
                out.append(ScreenLine([("⚠ approval ", .yellow), ("\(card.approval.toolName) \(Columns.printable(WatchState.oneLine(card.approval)))", .plain), (" — \(outcome)", .dim)]))
            case .notice(let level, let message): out.append(ScreenLine("[\(level.rawValue)] \(Columns.printable(message))", .yellow))
            case .hostError(let code, let message): out.append(ScreenLine("host error \(code): \(Columns.printable(message))", .red))
            case .turnEnded(let isError, let stop, _): out.append(ScreenLine("■ turn ended\(isError ? " with an error" : ""): \(stop)", isError ? .red : .dim))
            case .other(let kind): out.append(ScreenLine("(\(kind))", .dim))
            }
        }
        return out
    }

    static func diffLines(_ state: WatchState) -> [ScreenLine] {
        guard let lines = state.diff?.lines else { return [ScreenLine("fetching the diff…", .dim)] }
        if lines.isEmpty { return [ScreenLine("no changes against the base", .dim)] }
        return lines.map { bodyLine(Columns.printable($0)) }
    }

    static let helpLines: [ScreenLine] = [
        ("a", "allow the approval on the card (a risky one: a, then !)"),
        ("A", "allow always, at a scope the host offers (then its number)"),
        ("e", "edit the input in $EDITOR, then allow it"),
        ("d", "deny, with an optional message"),
        ("1–9", "answer the question on the card with that option; o types your own"),
        ("↑ ↓ j k", "move between sessions; the card shows the session's oldest approval"),
        ("n, tab", "back to the next approval that needs you"),
        ("space", "mark the approval on the card; a / d then answer every marked one"),
        ("esc", "clear the marks"),
        ("s", "send the session a follow-up"),
        ("i", "interrupt the session"),
        ("⏎", "the session's transcript"),
        ("D", "the session's diff against its base"),
        ("I", "integrate the session (squash, rebase or merge)"),
        ("x", "discard the session (asks first; its work stays on its branch)"),
        ("?", "this help"),
        ("q", "quit (Ctrl-C too)"),
    ].map { ScreenLine([(Columns.fit($0.0, 9), .bold), ($0.1, .plain)]) }
}
