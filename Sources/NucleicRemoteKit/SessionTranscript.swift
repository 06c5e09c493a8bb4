public import NucleicProtocol

/// One session's transcript as rows to draw, built from its events (docs/EVENTS.md).
///
/// ### Invariants
/// - `cursor` is the last seq applied; an event at or below it is a duplicate and changes nothing.
/// - Streamed text is merged: partials append to the open row of their kind, the complete text
///   replaces them and closes the row.
/// - A tool call has exactly one row, from its first input delta or its start to its completion.
public struct SessionTranscript: Sendable, Hashable {
    public var cursor: Int64
    public var rows: [TranscriptRow]
    /// The rows start from a snapshot's tail, not from the session's first event.
    public var truncated: Bool
    /// This client's follow-up input in flight.
    public var input: InputState

    public init(cursor: Int64 = 0, rows: [TranscriptRow] = [], truncated: Bool = false, input: InputState = .idle) {
        self.cursor = cursor
        self.rows = rows
        self.truncated = truncated
        self.input = input
    }

    /// A follow-up being sent (never queued).
    public enum InputState: Sendable, Hashable {
        case idle
        case sending
        case failed(String)
    }
}

/// One row of a transcript.
public struct TranscriptRow: Sendable, Hashable, Identifiable {
    /// Stable across updates: `tool:<id>`, `approval:<id>`, otherwise `seq:<n>` of its first event.
    public var id: String
    /// The seq of the event that made the row.
    public var seq: Int64
    public var content: Content

    public init(id: String, seq: Int64, content: Content) {
        self.id = id
        self.seq = seq
        self.content = content
    }

    public enum Content: Sendable, Hashable {
        case started(backend: String, model: String?)
        case user(String)
        case assistant(text: String, streaming: Bool)
        case reasoning(text: String, streaming: Bool)
        case tool(ToolRow)
        /// The card is `HostMirror.approvals[id]`.
        case approval(ApprovalID)
        case notice(level: NoticeLevel, message: String)
        /// A failure of the host itself (docs/EVENTS.md `error`).
        case hostError(code: String, message: String)
        case turnEnded(isError: Bool, stopReason: String, result: String?)
        /// An event kind this client does not draw specially.
        case other(kind: String)
    }
}

/// A tool call's collapsible row.
public struct ToolRow: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable {
        /// The model is still writing its input (deltas, no start yet).
        case writing
        case running
        case completed, failed, declined, interrupted
    }

    public var toolCallID: String
    public var name: String
    public var kind: ToolKind?
    public var input: JSONValue?
    /// Input JSON fragments received before the start.
    public var inputDraft: String
    /// Output printed so far, then the completion's output.
    public var output: String
    public var exitCode: Int64?
    public var status: Status
    /// Collapsed rows show the name and a one-line input; expanded ones input and output.
    public var collapsed: Bool

    public init(toolCallID: String, name: String, kind: ToolKind? = nil, input: JSONValue? = nil, inputDraft: String = "",
                output: String = "", exitCode: Int64? = nil, status: Status, collapsed: Bool = true) {
        self.toolCallID = toolCallID
        self.name = name
        self.kind = kind
        self.input = input
        self.inputDraft = inputDraft
        self.output = output
        self.exitCode = exitCode
        self.status = status
        self.collapsed = collapsed
    }

    /// A one-line summary of the input: a command, a path, or the JSON.
    public var inputSummary: String {
        guard let input else { return inputDraft }
        for key in ["command", "cmd", "file_path", "path", "pattern", "url", "query"] {
            if let v = input[key] {
                if let s = v.stringValue { return s }
                if let a = v.arrayValue { return a.compactMap(\.stringValue).joined(separator: " ") }
            }
        }
        return JSONWriter.string(input)
    }
}

extension SessionTranscript {
    /// Applies one event at `seq` (the caller has checked it is new).
    mutating func apply(_ e: SequencedEvent, mirror: inout HostMirror, sessionID: SessionID, deviceID: DeviceID?) {
        let seq = e.seq
        switch e.event {
        case .sessionStarted(let s):
            rows.append(TranscriptRow(id: "seq:\(seq)", seq: seq, content: .started(backend: s.backend, model: s.model)))
        case .userInput(let text):
            rows.append(TranscriptRow(id: "seq:\(seq)", seq: seq, content: .user(text)))
        case .assistantText(let text, let partial):
            mergeText(text, partial: partial, seq: seq, reasoning: false)
        case .reasoning(let text, let partial):
            mergeText(text, partial: partial, seq: seq, reasoning: true)
        case .toolCallInputDelta(let id, let delta):
            updateTool(id, seq: seq) { $0.inputDraft += delta } make: { ToolRow(toolCallID: id, name: "tool", inputDraft: delta, status: .writing) }
        case .toolCallStarted(let call):
            updateTool(call.toolCallID, seq: seq) {
                $0.name = call.name
                $0.kind = call.toolKind
                $0.input = call.input
                if $0.status == .writing { $0.status = .running }
            } make: { ToolRow(toolCallID: call.toolCallID, name: call.name, kind: call.toolKind, input: call.input, status: .running) }
        case .toolCallOutputDelta(let id, let delta):
            updateTool(id, seq: seq) { $0.output += delta } make: { ToolRow(toolCallID: id, name: "tool", output: delta, status: .running) }
        case .toolCallCompleted(let result):
            let status = ToolRow.Status(rawValue: result.status.rawValue) ?? .failed
            updateTool(result.toolCallID, seq: seq) {
                $0.status = status
                if let output = result.output { $0.output = output }
                $0.exitCode = result.exitCode
            } make: { ToolRow(toolCallID: result.toolCallID, name: "tool", output: result.output ?? "", exitCode: result.exitCode, status: status) }
        case .approvalRequested(var request):
            // A transcript's request may not name its session; the transcript does.
            if request.sessionID == nil { request.sessionID = sessionID }
            SessionReducer.upsert(request, into: &mirror)
            if !rows.contains(where: { $0.id == "approval:\(request.id.rawValue)" }) {
                rows.append(TranscriptRow(id: "approval:\(request.id.rawValue)", seq: seq, content: .approval(request.id)))
            }
        case .approvalResolved(let r):
            SessionReducer.resolve(r, in: &mirror, deviceID: deviceID)
        case .approvalWithdrawn(let id, let reason):
            if mirror.approvals[id] != nil, mirror.approvals[id]!.outcome == .pending {
                mirror.approvals[id]!.outcome = .withdrawn(reason: reason)
            }
        case .notice(let level, let message, _):
            rows.append(TranscriptRow(id: "seq:\(seq)", seq: seq, content: .notice(level: level, message: message)))
        case .error(let code, let message, _):
            rows.append(TranscriptRow(id: "seq:\(seq)", seq: seq, content: .hostError(code: code, message: message)))
        case .runFinished(let r):
            closeStreaming()
            rows.append(TranscriptRow(id: "seq:\(seq)", seq: seq, content: .turnEnded(isError: r.isError, stopReason: r.stopReason, result: r.result)))
        case .statusChanged, .usage, .diffUpdated:
            break  // shown through the session summary, not as rows
        case .unknown:
            rows.append(TranscriptRow(id: "seq:\(seq)", seq: seq, content: .other(kind: "unknown")))
        }
        cursor = seq
    }

    private mutating func mergeText(_ text: String, partial: Bool, seq: Int64, reasoning: Bool) {
        if let i = openStreamingRow(reasoning: reasoning) {
            guard case .assistant(let old, _) = rows[i].content.normalized else { return }
            let merged = partial ? old + text : text
            rows[i].content = reasoning ? .reasoning(text: merged, streaming: partial) : .assistant(text: merged, streaming: partial)
        } else {
            rows.append(TranscriptRow(id: "seq:\(seq)", seq: seq,
                                      content: reasoning ? .reasoning(text: text, streaming: partial) : .assistant(text: text, streaming: partial)))
        }
    }

    /// The streaming row of this kind in the current turn, if any.
    private func openStreamingRow(reasoning: Bool) -> Int? {
        for i in rows.indices.reversed() {
            switch rows[i].content {
            case .assistant(_, let streaming) where !reasoning: return streaming ? i : nil
            case .reasoning(_, let streaming) where reasoning: return streaming ? i : nil
            case .user, .turnEnded: return nil
            default: continue
            }
        }
        return nil
    }

    /// A turn ended: streaming rows that never got their complete text stop streaming.
    private mutating func closeStreaming() {
        for i in rows.indices {
            switch rows[i].content {
            case .assistant(let t, true): rows[i].content = .assistant(text: t, streaming: false)
            case .reasoning(let t, true): rows[i].content = .reasoning(text: t, streaming: false)
            default: continue
            }
        }
    }

    private mutating func updateTool(_ id: String, seq: Int64, _ change: (inout ToolRow) -> Void, make: () -> ToolRow) {
        if let i = rows.lastIndex(where: { $0.id == "tool:\(id)" }), case .tool(var tool) = rows[i].content {
            change(&tool)
            rows[i].content = .tool(tool)
        } else {
            rows.append(TranscriptRow(id: "tool:\(id)", seq: seq, content: .tool(make())))
        }
    }
}

extension TranscriptRow.Content {
    /// Reasoning read as assistant text, so one merge serves both.
    var normalized: TranscriptRow.Content {
        if case .reasoning(let t, let s) = self { return .assistant(text: t, streaming: s) }
        return self
    }
}
