public import NucleicProtocol
public import NucleicRemoteKit

/// `watch` when its output is not a terminal (a pipe, a log file): one line per change instead
/// of a screen. A pure function of the state before and after.
///
/// Lines: the connection chip when it changes (`— box · ● Connected · NEEDS YOU 1`), a session's
/// row when its status, activity or badge changes, an approval when it starts waiting (with its
/// handle, so a script can answer it) and when it is resolved.
public enum WatchLog {
    public static func lines(from old: WatchState?, to new: WatchState) -> [String] {
        var out: [String] = []
        let chip = chipLine(new)
        if old.map(chipLine) != chip { out.append(chip) }
        let before = Dictionary((old?.listed ?? []).map { ($0.sessionID, old!.row(for: $0)) }, uniquingKeysWith: { a, _ in a })
        for summary in new.remote.mirror.sessions {
            let row = new.row(for: summary)
            let was = before[summary.sessionID]
            if let was, was.summary.status == summary.status, was.activity == row.activity, was.pending == row.pending { continue }
            if was == nil, summary.status.isArchived { continue }
            out.append(rowLine(row))
        }
        let oldApprovals = old?.remote.mirror.approvals ?? [:]
        for card in new.remote.mirror.approvals.values.sorted(by: { $0.approval.id < $1.approval.id }) {
            let was = oldApprovals[card.approval.id]?.outcome
            if was == card.outcome { continue }
            switch card.outcome {
            case .pending: out.append(approvalLine(card, new))
            case .resolved(let r) where was != nil: out.append("✓ approval \(card.approval.displayName) \(r.summary)")
            case .answeredElsewhere(let m) where was != nil: out.append("✓ approval \(card.approval.displayName): \(m)")
            case .withdrawn(let reason) where was != nil: out.append("– approval \(card.approval.displayName) withdrawn: \(reason)")
            default: break
            }
        }
        return out
    }

    static func chipLine(_ s: WatchState) -> String {
        "— \(s.remote.host?.hostName ?? "nucleic") · \(s.remote.connection.chip()) · NEEDS YOU \(s.remote.mirror.badge)"
    }

    static func rowLine(_ row: WatchRow) -> String {
        let s = row.summary
        let diff = s.diffStat.map { d in d.insertions + d.deletions > 0 ? " +\(d.insertions)/−\(d.deletions)" : "" } ?? ""
        let badge = row.pending > 0 ? " [\(row.pending)]" : ""
        let activity = row.activity.split(separator: "\n").first.map(String.init) ?? ""
        return "\(row.glyph) \(s.displayName) \(s.title) [\(s.projectName)] \(s.status.rawValue) · \(activity)\(diff)\(badge)"
    }

    static func approvalLine(_ card: ApprovalCard, _ state: WatchState) -> String {
        let title = card.approval.sessionID.flatMap { state.remote.mirror.summary($0)?.title } ?? "?"
        let risky = card.verdict.needsDeliberateStep ? " (risky)" : ""
        return "! approval \(card.approval.displayName) · \(title) · \(card.approval.toolName) \(WatchState.oneLine(card.approval)) [risk \(card.approval.risk.rawValue)\(risky)]"
    }
}
