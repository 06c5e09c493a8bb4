public import NucleicProtocol
public import NucleicRemoteKit

/// Everything `nucleic watch` shows, as one value: the client core's `RemoteState` (the same
/// reducer and state the paired-device client uses, whatever the transport), plus what only
/// this view has — the card's selection, the list cursor, the mode a key put it in, the last
/// action's outcome.
///
/// ### Invariants
/// - `selection` follows `WatchSelection` after every event: the oldest pending approval of the
///   top NEEDS YOU session, sticky until resolved (or the one the person moved to).
/// - `cursor` is nil only when there is no session; else a listed session. When the selection
///   changes to an approval of a listed session, the cursor moves to that session.
/// - `marked` holds only pending approvals.
/// - A mode that acts on an approval (`armed`, `chooseScope`, a deny or answer prompt) names a
///   pending one: when it is resolved elsewhere the mode falls back to `list` and `flash` says so.
/// - No action is emitted while `remote.actionsEnabled` is false.
public struct WatchState: Sendable, Hashable {
    public var remote: RemoteState
    public var selection: WatchSelection
    /// The session `s`, `i`, `enter`, `D`, `I` and `x` act on (moved with ↑/↓ or j/k).
    public var cursor: SessionID?
    public var mode: WatchMode
    /// One line about the last action or refusal, cleared by the next key.
    public var flash: String?
    /// The time elapsed times are measured to (the driver ticks it).
    public var now: Timestamp?
    /// Answers chosen so far for the selected question, by question text (several questions are
    /// answered one after the other).
    public var answers: [String: [String]]
    /// The diff `D` asked for: the session and its lines (nil until it arrives).
    public var diff: DiffPage?
    /// First line shown in a scrolled view (transcript, diff, help).
    public var scroll: Int
    /// Approvals marked with space, answered together by `a` (none risky, no question) or `d`.
    public var marked: Set<ApprovalID>
    /// What the host's rules say of each approval the card has shown (`explainRule`), once it
    /// has answered.
    public var rules: [ApprovalID: CardRules]

    public init(remote: RemoteState = RemoteState(), selection: WatchSelection = WatchSelection(), cursor: SessionID? = nil,
                mode: WatchMode = .list, flash: String? = nil, now: Timestamp? = nil, answers: [String: [String]] = [:],
                diff: DiffPage? = nil, scroll: Int = 0, marked: Set<ApprovalID> = [], rules: [ApprovalID: CardRules] = [:]) {
        self.marked = marked
        self.rules = rules
        self.remote = remote
        self.selection = selection
        self.cursor = cursor
        self.mode = mode
        self.flash = flash
        self.now = now
        self.answers = answers
        self.diff = diff
        self.scroll = scroll
    }

    /// The selected approval's card, when one is selected.
    public var card: ApprovalCard? { selection.selected.flatMap { remote.mirror.approvals[$0] } }

    /// The session under the cursor.
    public var cursorSession: SessionID? { cursor }

    /// The sessions shown in the list, in attention order (archived ones left out).
    public var listed: [SessionSummary] { remote.mirror.sessions.filter { !$0.status.isArchived } }

    /// The list's groups in order, each with its rows; empty groups are left out.
    public var groups: [WatchGroup] {
        var groups: [WatchGroup] = []
        for bucket in SessionStatus.Bucket.allCases {
            let rows = listed.filter { $0.status.bucket == bucket }.map { row(for: $0) }
            if !rows.isEmpty { groups.append(WatchGroup(bucket: bucket, rows: rows)) }
        }
        return groups
    }

    /// One session's row.
    public func row(for s: SessionSummary) -> WatchRow {
        let pending = remote.mirror.pendingApprovals.count { $0.approval.sessionID == s.sessionID }
        return WatchRow(summary: s, activity: activity(of: s), pending: max(pending, s.pendingApprovals),
                        elapsedSeconds: now.map { max(0, ($0.millisecondsSince1970 - s.updatedAt.millisecondsSince1970) / 1000) })
    }

    /// What a session does now: the tool running, "thinking", the approval it waits on, or why
    /// it stopped.
    public func activity(of s: SessionSummary) -> String {
        let rows = remote.mirror.transcripts[s.sessionID]?.rows ?? []
        switch s.status {
        case .awaitingApproval:
            if let card = remote.mirror.pendingApprovals.first(where: { $0.approval.sessionID == s.sessionID }) {
                return "waiting: \(card.approval.toolName) \(Self.oneLine(card.approval))"
            }
            return "waiting for an approval"
        case .running:
            for row in rows.reversed() {
                switch row.content {
                case .tool(let tool) where tool.status == .running || tool.status == .writing:
                    return "\(tool.name) \(tool.inputSummary)"
                case .user, .turnEnded: return "thinking"
                default: continue
                }
            }
            return "thinking"
        case .queued: return "queued"
        case .awaitingInput: return "waiting for you"
        case .error:
            for row in rows.reversed() {
                if case .turnEnded(true, let stop, _) = row.content { return "failed: \(stop)" }
            }
            return "failed"
        case .conflicted: return "integration conflicted"
        case .finished:
            for row in rows.reversed() {
                if case .turnEnded(_, _, let result?) = row.content { return result }
            }
            return "finished"
        case .integrated: return "integrated"
        case .discarded: return "discarded"
        }
    }

    /// An approval's input on one line: its command, path or JSON.
    public static func oneLine(_ request: ApprovalRequest) -> String {
        if let q = request.question?.questions.first { return q.question }
        return ToolRow(toolCallID: "", name: request.toolName, input: request.input, status: .running).inputSummary
    }
}

/// A section of the list.
public struct WatchGroup: Sendable, Hashable {
    public var bucket: SessionStatus.Bucket
    public var rows: [WatchRow]

    /// `NEEDS YOU`, `RUNNING`, `DONE`.
    public var title: String {
        switch bucket {
        case .needsYou: "NEEDS YOU"
        case .running: "RUNNING"
        case .done: "DONE"
        }
    }
}

/// One session in the list.
public struct WatchRow: Sendable, Hashable {
    public var summary: SessionSummary
    /// The tool running now, "thinking", or what it waits for.
    public var activity: String
    /// Pending approvals of this session: its badge.
    public var pending: Int
    /// Seconds since the session last changed (nil without a clock).
    public var elapsedSeconds: Int64?

    /// The seeds' status glyph: ⚠ needs you, ◐ running, ◔ queued, ✓ done, ✗ failed.
    public var glyph: String {
        switch summary.status {
        case .awaitingApproval, .awaitingInput, .conflicted: "⚠"
        case .error: "✗"
        case .queued: "◔"
        case .running: "◐"
        case .finished, .integrated, .discarded: "✓"
        }
    }
}

/// The host's rules on one approval, as the card shows them.
public enum CardRules: Sendable, Hashable {
    /// `explainRule`'s answer: which rules match (and whether they count), why a person is asked.
    case verdict(RuleVerdict)
    /// The host would not say (a device below the `control` scope, an older host): why.
    case unavailable(String)
}

/// A session's diff as `D` shows it.
public struct DiffPage: Sendable, Hashable {
    public var sessionID: SessionID
    /// The stat line then the patch; nil while it is being fetched.
    public var lines: [String]?

    public init(sessionID: SessionID, lines: [String]? = nil) {
        self.sessionID = sessionID
        self.lines = lines
    }
}

/// What the keys mean right now.
public enum WatchMode: Sendable, Hashable {
    /// The list and the card.
    case list
    /// A risky allow waits for its second, deliberate key (`!`); any other key disarms it.
    case armed(ApprovalID, Decision)
    /// `A`: a digit picks one of the offered "allow always" scopes.
    case chooseScope(ApprovalID)
    /// A line being typed.
    case prompt(WatchPrompt)
    /// `x`: `y` discards the session, anything else keeps it.
    case confirmDiscard(SessionID)
    /// `I`: `s` squash, `r` rebase, `m` merge.
    case chooseStrategy(SessionID)
    /// `enter`: the session's transcript, scrollable.
    case transcript(SessionID)
    /// `D`: the session's diff, scrollable.
    case diff(SessionID)
    /// `?`.
    case help
}

/// A line being typed, and what it is for.
public struct WatchPrompt: Sendable, Hashable {
    public enum Purpose: Sendable, Hashable {
        /// `d`: the deny message (may stay empty).
        case deny(ApprovalID)
        /// `d` with approvals marked: one message for every one of them.
        case denyMarked([ApprovalID])
        /// `s`: a follow-up to the session.
        case followUp(SessionID)
        /// An answer of one's own to a question that takes one.
        case answer(ApprovalID)
    }

    public var purpose: Purpose
    public var text: String

    public init(_ purpose: Purpose, text: String = "") {
        self.purpose = purpose
        self.text = text
    }

    /// What the prompt line says before the text.
    public var label: String {
        switch purpose {
        case .deny: "deny — message (optional), enter to send, esc to cancel: "
        case .denyMarked(let ids): "deny \(ids.count) marked — message (optional), enter to send, esc to cancel: "
        case .followUp: "follow-up, enter to send, esc to cancel: "
        case .answer: "your answer, enter to send, esc to cancel: "
        }
    }
}
