/// What a backend's protocol lets the host do. Everything that answers an agent reads these:
/// a decision the backend cannot carry is refused with `unsupported`, never sent half-way.
public struct BackendCapabilities: Sendable, Hashable, JSONRepresentable {
    /// The approval answer can replace the tool's input (Claude `updatedInput`; Codex cannot).
    public var canModifyToolInput: Bool
    /// The agent can ask structured questions the user answers (Claude AskUserQuestion; Codex
    /// `requestUserInput`, only in Plan mode).
    public var canAnswerQuestions: Bool
    /// The backend has its own "approve for the rest of this session" (Codex `acceptForSession`).
    public var canAcceptForSession: Bool
    /// Questions only arrive in a planning mode chosen per turn.
    public var questionsNeedPlanMode: Bool
    /// The agent can be interrupted in-band (without a signal).
    public var canInterrupt: Bool
    /// A session can be resumed by a new process (Claude `--resume`, Codex `thread/resume`).
    public var canResume: Bool

    public init(
        canModifyToolInput: Bool, canAnswerQuestions: Bool, canAcceptForSession: Bool = false,
        questionsNeedPlanMode: Bool = false, canInterrupt: Bool = true, canResume: Bool = false
    ) {
        self.canModifyToolInput = canModifyToolInput
        self.canAnswerQuestions = canAnswerQuestions
        self.canAcceptForSession = canAcceptForSession
        self.questionsNeedPlanMode = questionsNeedPlanMode
        self.canInterrupt = canInterrupt
        self.canResume = canResume
    }

    /// Claude Code over stream-json with `--permission-prompt-tool stdio`.
    public static let claude = BackendCapabilities(
        canModifyToolInput: true, canAnswerQuestions: true, canAcceptForSession: false,
        questionsNeedPlanMode: false, canInterrupt: true, canResume: true)

    /// Codex `app-server`.
    public static let codex = BackendCapabilities(
        canModifyToolInput: false, canAnswerQuestions: true, canAcceptForSession: true,
        questionsNeedPlanMode: true, canInterrupt: true, canResume: true)

    static let keys = [
        "canModifyToolInput", "canAnswerQuestions", "canAcceptForSession", "questionsNeedPlanMode",
        "canInterrupt", "canResume",
    ]

    var values: [Bool] {
        [canModifyToolInput, canAnswerQuestions, canAcceptForSession, questionsNeedPlanMode, canInterrupt, canResume]
    }

    public var json: JSONValue {
        .object(JSONObject(zip(Self.keys, values).map { JSONObject.Entry($0, .bool($1)) }))
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "capabilities")
        self.init(
            canModifyToolInput: try f.bool("canModifyToolInput", default: false),
            canAnswerQuestions: try f.bool("canAnswerQuestions", default: false),
            canAcceptForSession: try f.bool("canAcceptForSession", default: false),
            questionsNeedPlanMode: try f.bool("questionsNeedPlanMode", default: false),
            canInterrupt: try f.bool("canInterrupt", default: false),
            canResume: try f.bool("canResume", default: false))
    }
}
