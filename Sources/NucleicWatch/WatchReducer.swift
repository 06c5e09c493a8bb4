public import NucleicProtocol
public import NucleicRemoteKit

/// A key the view reacts to, read from the terminal's bytes (`WatchKey.parse`).
public enum WatchKey: Sendable, Hashable {
    case char(Character)
    case enter, escape, backspace, up, down, pageUp, pageDown, tab
    /// Ctrl-C as a byte (raw mode does not turn it into SIGINT).
    case interrupt
}

/// What the view consumes.
public enum WatchEvent: Sendable, Hashable {
    /// A message or local change for the client core: reduced by `SessionReducer`.
    case remote(RemoteInput)
    /// The client core's whole state (what a `Connection` publishes after each reduction).
    case state(RemoteState)
    case key(WatchKey)
    /// The clock moved (elapsed times).
    case tick(Timestamp)
    /// An action finished: the line to show.
    case outcome(String)
    /// The input edited for `editThenAllow` was saved: allow with it (a risky call still waits
    /// for its second key).
    case edited(ApprovalID, JSONValue)
    /// The diff `D` asked for arrived (or could not be had: one line saying why).
    case diffLoaded(SessionID, [String])
    /// What the host's rules say of an approval (`explainRules` asked).
    case rulesExplained(ApprovalID, CardRules)
}

/// What the view asks its driver to do. The driver performs it through the client core and
/// reports back with `.outcome`.
public enum WatchCommand: Sendable, Hashable {
    /// `deliberate`: the second key of a risky approval was pressed.
    case respond(ApprovalID, Decision, deliberate: Bool)
    /// Open the input in `$EDITOR`, then allow with what was saved.
    case editThenAllow(ApprovalID)
    case sendInput(SessionID, String)
    case interrupt(SessionID)
    case loadDiff(SessionID)
    /// `strategy`: squash, rebase or merge.
    case integrate(SessionID, strategy: String)
    case discard(SessionID)
    /// Ask the host which rules match the approval (`explainRule`), for its card.
    case explainRules(ApprovalID)
    case quit
}

extension WatchState {
    /// Applies one event and returns what the driver must do. Pure.
    public mutating func handle(_ event: WatchEvent) -> [WatchCommand] {
        var commands: [WatchCommand] = []
        let selectedBefore = selection.selected
        let liveBefore = remote.connection.isLive
        switch event {
        case .remote(let input): SessionReducer.reduce(&remote, input)
        case .state(let state): remote = state
        case .key(let key):
            flash = nil
            commands = press(key)
        case .tick(let t): now = t
        case .outcome(let line): flash = line
        case .edited(let id, let input):
            if let card = remote.mirror.approvals[id], card.outcome == .pending {
                commands = allow(card, .allowModified(input: input))
            } else {
                flash = "not sent: that approval was answered meanwhile"
            }
        case .diffLoaded(let id, let lines):
            if diff?.sessionID == id { diff = DiffPage(sessionID: id, lines: lines) }
        case .rulesExplained(let id, let explanation):
            if remote.mirror.approvals[id] != nil { rules[id] = explanation }
        }
        settle()
        // A card newly shown (or shown again once the link is back) asks what the rules say.
        if let id = selection.selected, rules[id] == nil, remote.connection.isLive,
           id != selectedBefore || !liveBefore {
            commands.append(.explainRules(id))
        }
        return commands
    }

    /// Re-establishes the invariants after the remote state or a key changed things.
    mutating func settle() {
        let before = selection.selected
        selection = selection.advanced(in: remote.mirror)
        let ids = listed.map(\.sessionID)
        if selection.selected != before {
            answers = [:]
            // The cursor follows the card to its session.
            if let session = card?.approval.sessionID, ids.contains(session) { cursor = session }
        }
        if cursor == nil || !ids.contains(cursor!) {
            cursor = card?.approval.sessionID.flatMap { ids.contains($0) ? $0 : nil } ?? ids.first
        }
        marked = marked.filter { remote.mirror.approvals[$0]?.outcome == .pending }
        rules = rules.filter { remote.mirror.approvals[$0.key]?.outcome == .pending }
        // A mode about an approval that is no longer pending ends, saying why.
        let approval: ApprovalID? = switch mode {
        case .armed(let id, _), .chooseScope(let id): id
        case .prompt(let p): switch p.purpose {
            case .deny(let id), .answer(let id): id
            case .denyMarked(let ids): ids.first { remote.mirror.approvals[$0]?.outcome == .pending } == nil ? ids.first : nil
            case .followUp: nil
            }
        default: nil
        }
        if let approval, remote.mirror.approvals[approval]?.outcome != .pending {
            mode = .list
            flash = "that approval was answered meanwhile" + (resolutionSummary(approval).map { ": \($0)" } ?? "")
        }
    }

    func resolutionSummary(_ id: ApprovalID) -> String? {
        switch remote.mirror.approvals[id]?.outcome {
        case .resolved(let r): r.summary
        case .answeredElsewhere(let m): m
        case .withdrawn(let reason): "withdrawn (\(reason))"
        default: nil
        }
    }

    // MARK: - Keys

    mutating func press(_ key: WatchKey) -> [WatchCommand] {
        if key == .interrupt { return [.quit] }
        switch mode {
        case .list: return listKey(key)
        case .armed(let id, let decision):
            mode = .list
            if key == .char("!") { return act(.respond(id, decision, deliberate: true)) }
            flash = "not sent"
            return []
        case .chooseScope(let id):
            mode = .list
            guard case .char(let c) = key, let n = c.wholeNumberValue, n >= 1, let card = remote.mirror.approvals[id],
                  n <= card.verdict.allowAlwaysScopes.count
            else {
                flash = "not sent"
                return []
            }
            let decision = Decision.allowAlways(scope: card.verdict.allowAlwaysScopes[n - 1])
            return allow(card, decision)
        case .prompt(var prompt):
            switch key {
            case .escape:
                mode = .list
                flash = "not sent"
            case .backspace:
                if !prompt.text.isEmpty { prompt.text.removeLast() }
                mode = .prompt(prompt)
            case .enter:
                mode = .list
                switch prompt.purpose {
                case .deny(let id): return act(.respond(id, .deny(message: prompt.text), deliberate: false))
                case .denyMarked(let ids):
                    let still = ids.filter { remote.mirror.approvals[$0]?.outcome == .pending }
                    if remote.actionsDisabledReason == nil { marked.subtract(still) }
                    return still.flatMap { act(.respond($0, .deny(message: prompt.text), deliberate: false)) }
                case .followUp(let id):
                    guard !prompt.text.isEmpty else { flash = "nothing to send"; return [] }
                    return act(.sendInput(id, prompt.text))
                case .answer(let id):
                    guard !prompt.text.isEmpty else { flash = "nothing to send"; return [] }
                    return answer(id, text: prompt.text)
                }
            case .char(let c):
                prompt.text.append(c)
                mode = .prompt(prompt)
            case .tab:
                prompt.text.append(" ")
                mode = .prompt(prompt)
            default: break
            }
            return []
        case .confirmDiscard(let id):
            mode = .list
            if key == .char("y") { return act(.discard(id)) }
            flash = "kept"
            return []
        case .chooseStrategy(let id):
            mode = .list
            let strategy: String? = switch key {
            case .char("s"): "squash"
            case .char("r"): "rebase"
            case .char("m"): "merge"
            default: nil
            }
            guard let strategy else { flash = "not integrated"; return [] }
            return act(.integrate(id, strategy: strategy))
        case .transcript, .diff, .help:
            // "The end" (Int.max) becomes a real line before moving from it.
            scroll = min(scroll, max(0, WatchScreen.contentLineCount(self) - 1))
            switch key {
            case .char("q"), .escape, .enter: mode = .list; scroll = 0
            case .down, .char("j"): scroll += 1
            case .up, .char("k"): scroll = max(0, scroll - 1)
            case .pageDown, .char(" "): scroll += 20
            case .pageUp: scroll = max(0, scroll - 20)
            default: break
            }
            if mode == .list { diff = nil }
            return []
        }
    }

    mutating func listKey(_ key: WatchKey) -> [WatchCommand] {
        switch key {
        case .char("q"): return [.quit]
        case .char("?"): mode = .help; scroll = 0; return []
        case .down, .char("j"): moveCursor(1); return []
        case .up, .char("k"): moveCursor(-1); return []
        case .char("n"), .tab:
            // Back to the rule: the oldest approval of the top NEEDS YOU session.
            guard let next = WatchSelection.choice(in: remote.mirror) else { flash = "nothing needs you"; return [] }
            selection = WatchSelection(selected: next)
            if let session = card?.approval.sessionID, listed.contains(where: { $0.sessionID == session }) { cursor = session }
            return []
        case .char(" "):
            guard let card, card.outcome == .pending else { flash = "no approval to mark"; return [] }
            if marked.remove(card.approval.id) == nil { marked.insert(card.approval.id) }
            return []
        case .escape:
            if !marked.isEmpty { marked = []; flash = "marks cleared" }
            return []
        default: break
        }
        // Everything below acts on something; nothing is sent while actions are disabled.
        if let reason = remote.actionsDisabledReason, key != .enter {
            flash = "actions disabled: \(reason)"
            return []
        }
        if !marked.isEmpty, key == .char("a") || key == .char("d") { return answerMarked(key == .char("a")) }
        switch key {
        case .char("a"), .char("A"), .char("e"), .char("d"):
            guard let card, card.outcome == .pending else {
                flash = selection.held != nil && !remote.mirror.pendingApprovals.isEmpty
                    ? "no approval is waiting in this session (n: the next one that needs you)" : "no approval is waiting"
                return []
            }
            guard card.action != .sending else { flash = "an answer is already on its way"; return [] }
            switch key {
            case .char("a"):
                if card.verdict.isQuestion { flash = "a question: press its option's number (1–9)"; return [] }
                return allow(card, .allow)
            case .char("A"):
                let scopes = card.verdict.allowAlwaysScopes
                if scopes.isEmpty { flash = "allow always is not offered for this approval (risk \(card.approval.risk.rawValue))"; return [] }
                mode = .chooseScope(card.approval.id)
                return []
            case .char("e"):
                guard card.verdict.canModifyInput, !card.verdict.isQuestion else { flash = "this backend cannot take an edited input"; return [] }
                return [.editThenAllow(card.approval.id)]
            default:
                mode = .prompt(WatchPrompt(.deny(card.approval.id)))
                return []
            }
        case .char(let c) where c.wholeNumberValue.map { (1...9).contains($0) } == true:
            guard let card, card.outcome == .pending, let question = card.approval.question else {
                flash = "no question is waiting"
                return []
            }
            guard let item = question.questions.first(where: { answers[$0.question] == nil }) else { return [] }
            let n = c.wholeNumberValue!
            guard n <= item.options.count else { flash = "\"\(item.question)\" has \(item.options.count) options"; return [] }
            return answer(card.approval.id, text: String(n))
        case .char("o"):
            guard let card, card.outcome == .pending, let item = card.approval.question?.questions.first(where: { answers[$0.question] == nil }),
                  item.allowsOther
            else { flash = "no question takes an answer of your own"; return [] }
            mode = .prompt(WatchPrompt(.answer(card.approval.id)))
            return []
        case .char("s"):
            guard let cursor else { flash = "no session"; return [] }
            mode = .prompt(WatchPrompt(.followUp(cursor)))
            return []
        case .char("i"):
            guard let cursor else { flash = "no session"; return [] }
            return act(.interrupt(cursor))
        case .enter:
            guard let cursor else { return [] }
            mode = .transcript(cursor)
            scroll = Int.max  // the end: the renderer clamps it
            return []
        case .char("D"):
            guard let cursor else { return [] }
            mode = .diff(cursor)
            scroll = 0
            diff = DiffPage(sessionID: cursor)
            return [.loadDiff(cursor)]
        case .char("I"):
            guard let cursor else { flash = "no session"; return [] }
            mode = .chooseStrategy(cursor)
            return []
        case .char("x"):
            guard let cursor else { flash = "no session"; return [] }
            mode = .confirmDiscard(cursor)
            return []
        default:
            return []
        }
    }

    /// An allow-like decision: sent at once when inline, else armed for the second key.
    mutating func allow(_ card: ApprovalCard, _ decision: Decision) -> [WatchCommand] {
        if card.verdict.needsDeliberateStep {
            mode = .armed(card.approval.id, decision)
            return []
        }
        return act(.respond(card.approval.id, decision, deliberate: false))
    }

    /// One question answered (by an option's number or one's own text): the answer goes out
    /// when every question of the approval has one.
    mutating func answer(_ id: ApprovalID, text: String) -> [WatchCommand] {
        guard let question = remote.mirror.approvals[id]?.approval.question,
              let item = question.questions.first(where: { answers[$0.question] == nil })
        else { return [] }
        do throws(ShapeError) {
            answers[item.question] = try QuestionAnswer.resolve(text, for: item)
        } catch {
            flash = error.message
            return []
        }
        guard question.questions.allSatisfy({ answers[$0.question] != nil }) else { return [] }
        let decision = Decision.answer(answers: answers)
        answers = [:]
        return act(.respond(id, decision, deliberate: false))
    }

    /// A command that needs a live channel: refused with the reason when actions are disabled.
    mutating func act(_ command: WatchCommand) -> [WatchCommand] {
        if let reason = remote.actionsDisabledReason {
            flash = "actions disabled: \(reason)"
            return []
        }
        return [command]
    }

    /// Moves the cursor in list order (groups top to bottom); the card follows it to that
    /// session's oldest pending approval, or stays empty for it.
    mutating func moveCursor(_ by: Int) {
        let ids = groups.flatMap { $0.rows.map(\.summary.sessionID) }
        guard !ids.isEmpty else { return }
        let i = cursor.flatMap { ids.firstIndex(of: $0) } ?? 0
        let next = ids[min(max(0, i + by), ids.count - 1)]
        guard next != cursor else { return }
        cursor = next
        let before = selection.selected
        selection = WatchSelection.selecting(session: next, in: remote.mirror)
        if selection.selected != before { answers = [:] }
    }

    /// `a` or `d` with approvals marked: every marked one at once. Allowing is refused when any
    /// is risky (each needs its own second key) or a question (each needs its answer); denying
    /// is always possible.
    mutating func answerMarked(_ allowing: Bool) -> [WatchCommand] {
        let cards = marked.compactMap { remote.mirror.approvals[$0] }.filter { $0.outcome == .pending }
            .sorted { ($0.approval.createdAt?.millisecondsSince1970 ?? 0, $0.approval.id) < ($1.approval.createdAt?.millisecondsSince1970 ?? 0, $1.approval.id) }
        guard !cards.isEmpty else { marked = []; flash = "no marked approval is waiting"; return [] }
        guard allowing else {
            mode = .prompt(WatchPrompt(.denyMarked(cards.map(\.approval.id))))
            return []
        }
        let risky = cards.filter { $0.verdict.needsDeliberateStep }
        if !risky.isEmpty {
            flash = "not sent: \(risky.count) of the \(cards.count) marked \(risky.count == 1 ? "is" : "are") risky (\(Set(risky.map(\.approval.risk.rawValue)).sorted().joined(separator: ", "))): allow \(risky.count == 1 ? "it" : "those") one at a time"
            return []
        }
        if cards.contains(where: { $0.verdict.isQuestion }) {
            flash = "not sent: a marked approval is a question; answer it with its option's number"
            return []
        }
        if cards.contains(where: { $0.action == .sending }) {
            flash = "an answer is already on its way"
            return []
        }
        let commands = cards.flatMap { act(.respond($0.approval.id, .allow, deliberate: false)) }
        if !commands.isEmpty { marked = [] }
        return commands
    }
}

extension WatchKey {
    /// The keys in bytes read from a terminal in raw mode: printable UTF-8, enter (CR or LF),
    /// backspace (DEL or BS), escape sequences for the arrows and page keys; a lone ESC is
    /// escape. Unknown sequences are dropped.
    public static func parse(_ bytes: [UInt8]) -> [WatchKey] {
        var keys: [WatchKey] = []
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case 0x03: keys.append(.interrupt); i += 1
            case 0x0D, 0x0A: keys.append(.enter); i += 1
            case 0x7F, 0x08: keys.append(.backspace); i += 1
            case 0x09: keys.append(.tab); i += 1
            case 0x1B:
                if i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "[") || bytes[i + 1] == UInt8(ascii: "O") {
                    var j = i + 2
                    while j < bytes.count, !(0x40...0x7E).contains(bytes[j]) { j += 1 }
                    let sequence = Array(bytes[(i + 2)..<min(j + 1, bytes.count)])
                    switch sequence {
                    case [UInt8(ascii: "A")]: keys.append(.up)
                    case [UInt8(ascii: "B")]: keys.append(.down)
                    case [UInt8(ascii: "5"), UInt8(ascii: "~")]: keys.append(.pageUp)
                    case [UInt8(ascii: "6"), UInt8(ascii: "~")]: keys.append(.pageDown)
                    default: break
                    }
                    i = j + 1
                } else {
                    keys.append(.escape)
                    i += 1
                }
            case 0x20...0x7E:
                keys.append(.char(Character(Unicode.Scalar(b))))
                i += 1
            case 0xC0...0xF7:
                let length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2
                let end = min(i + length, bytes.count)
                if let s = String(validating: bytes[i..<end], as: UTF8.self), let c = s.first { keys.append(.char(c)) }
                i = end
            default: i += 1
            }
        }
        return keys
    }
}
