public import NucleicProtocol

/// The one place every surface (app card, notification action, widget button, Live Activity,
/// App Intent, the terminal client) asks how an approval may be answered.
///
/// ### Invariants
/// - readOnly, write and execute may be answered inline (a notification's Allow, a widget
///   button, one key in the terminal).
/// - unknown, network, hostExec and destructive need the deliberate step (open the card; Face ID
///   on a phone; typing the word in the terminal) before Allow is enabled.
/// - "Allow always" is never offered for network, hostExec or destructive, whatever the host
///   offered; for the others only the scopes the host offered are shown.
/// - Deny needs no gate: saying no is always safe.
public enum RiskGate {
    /// How an approval may be answered.
    public struct Verdict: Sendable, Hashable {
        /// Allow may be given inline, without opening the card or a biometric step.
        public var allowInline: Bool
        /// Allow needs the deliberate step first.
        public var needsDeliberateStep: Bool
        /// The "allow always" scopes that may be offered (empty when none).
        public var allowAlwaysScopes: [ApprovalScope]
        /// Whether a modified input may be offered (the backend can carry it).
        public var canModifyInput: Bool
        /// Whether the request is a question to answer rather than a tool to allow.
        public var isQuestion: Bool
    }

    /// The verdict for `approval`.
    public static func verdict(for approval: ApprovalRequest) -> Verdict {
        let inline = allowsInline(approval.risk) && approval.question == nil
        return Verdict(
            allowInline: inline,
            needsDeliberateStep: !allowsInline(approval.risk),
            allowAlwaysScopes: approval.risk.alwaysNeedsPerson ? [] : approval.offeredScopes,
            canModifyInput: approval.capabilities.canModifyToolInput,
            isQuestion: approval.question != nil)
    }

    /// Whether a risk may be allowed inline: readOnly, write and execute.
    public static func allowsInline(_ risk: Risk) -> Bool { risk <= .execute }

    /// Whether `decision` may be sent for `approval` by a surface that has (or has not) taken the
    /// deliberate step. Every surface calls this before sending; the host judges again.
    public static func permits(_ decision: Decision, for approval: ApprovalRequest, deliberate: Bool) -> Bool {
        let v = verdict(for: approval)
        switch decision {
        case .deny, .cancel: return true
        case .allow: return v.allowInline || deliberate
        case .answer: return approval.question != nil
        case .allowModified: return v.canModifyInput && (v.allowInline || deliberate)
        case .allowAlways(let scope): return v.allowAlwaysScopes.contains(scope) && (v.allowInline || deliberate)
        }
    }
}
