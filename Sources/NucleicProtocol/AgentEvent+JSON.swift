/// The JSON of DESIGN.md §6: one flat object per event, `kind` first. docs/EVENTS.md is the
/// reference; this file and that page change together.
extension AgentEvent: JSONRepresentable {
    public var json: JSONValue { .object(jsonObject) }

    /// The event's fields, `kind` first; optional fields are omitted when absent.
    public var jsonObject: JSONObject {
        var o: JSONObject = ["kind": .string(kind)]
        switch self {
        case .sessionStarted(let s):
            o.append("backend", .string(s.backend))
            o.append("nativeSessionID", ifPresent: s.nativeSessionID.map(JSONValue.string))
            o.append("model", ifPresent: s.model.map(JSONValue.string))
            o.append("cwd", ifPresent: s.cwd.map(JSONValue.string))
            o.append("permissionMode", ifPresent: s.permissionMode.map(JSONValue.string))
            o.append("tools", .array(s.tools.map(JSONValue.string)))
        case .userInput(let text):
            o.append("text", .string(text))
        case .assistantText(let text, let isPartial), .reasoning(let text, let isPartial):
            o.append("text", .string(text))
            o.append("isPartial", .bool(isPartial))
        case .toolCallStarted(let call):
            o.append("toolCallID", .string(call.toolCallID))
            o.append("name", .string(call.name))
            o.append("toolKind", .string(call.toolKind.rawValue))
            o.append("input", call.input)
        case .toolCallInputDelta(let id, let delta), .toolCallOutputDelta(let id, let delta):
            o.append("toolCallID", .string(id))
            o.append("delta", .string(delta))
        case .toolCallCompleted(let r):
            o.append("toolCallID", .string(r.toolCallID))
            o.append("status", .string(r.status.rawValue))
            o.append("isError", .bool(r.isError))
            o.append("output", ifPresent: r.output.map(JSONValue.string))
            o.append("exitCode", ifPresent: r.exitCode.map(JSONValue.int))
        case .diffUpdated(let diff):
            o.append("diff", .string(diff))
        case .approvalRequested(let request):
            o.append("approval", request.json)
        case .approvalResolved(let r):
            o.append("approvalID", .string(r.approvalID.rawValue))
            o.append("decision", r.decision.json)
            o.append("decidedBy", .string(r.decidedBy))
            o.append("decidedByLabel", ifPresent: r.decidedByLabel.map(JSONValue.string))
        case .approvalWithdrawn(let id, let reason):
            o.append("approvalID", .string(id.rawValue))
            o.append("reason", .string(reason))
        case .statusChanged(let status, let reason):
            o.append("status", .string(status.rawValue))
            o.append("reason", ifPresent: reason.map(JSONValue.string))
        case .usage(let usage):
            o.append("usage", usage.json)
        case .runFinished(let r):
            o.append("isError", .bool(r.isError))
            o.append("stopReason", .string(r.stopReason))
            o.append("result", ifPresent: r.result.map(JSONValue.string))
            o.append("usage", ifPresent: r.usage?.json)
            o.append("costUSD", ifPresent: r.costUSD.map(JSONValue.double))
            o.append("durationMS", ifPresent: r.durationMS.map(JSONValue.int))
        case .notice(let level, let message, let code):
            o.append("level", .string(level.rawValue))
            o.append("message", .string(message))
            o.append("code", ifPresent: code.map(JSONValue.string))
        case .error(let code, let message, let preview):
            o.append("code", .string(code))
            o.append("message", .string(message))
            o.append("preview", ifPresent: preview.map(JSONValue.string))
        case .unknown(let raw, let nativeKind):
            o.append("raw", .string(raw))
            o.append("nativeKind", ifPresent: nativeKind.map(JSONValue.string))
        }
        return o
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "event")
        let kind = try f.string("kind")
        switch kind {
        case "sessionStarted":
            self = .sessionStarted(SessionStarted(
                backend: try f.string("backend"), nativeSessionID: try f.optionalString("nativeSessionID"),
                model: try f.optionalString("model"), cwd: try f.optionalString("cwd"),
                permissionMode: try f.optionalString("permissionMode"),
                tools: (f["tools"]?.arrayValue ?? []).compactMap(\.stringValue)))
        case "userInput": self = .userInput(text: try f.string("text"))
        case "assistantText": self = .assistantText(text: try f.string("text"), isPartial: try f.bool("isPartial", default: false))
        case "reasoning": self = .reasoning(text: try f.string("text"), isPartial: try f.bool("isPartial", default: false))
        case "toolCallStarted":
            self = .toolCallStarted(ToolCall(
                toolCallID: try f.string("toolCallID"), name: try f.string("name"),
                toolKind: ToolKind(rawValue: try f.optionalString("toolKind") ?? "other") ?? .other,
                input: f["input"] ?? .null))
        case "toolCallInputDelta": self = .toolCallInputDelta(toolCallID: try f.string("toolCallID"), delta: try f.string("delta"))
        case "toolCallOutputDelta": self = .toolCallOutputDelta(toolCallID: try f.string("toolCallID"), delta: try f.string("delta"))
        case "toolCallCompleted":
            self = .toolCallCompleted(ToolResult(
                toolCallID: try f.string("toolCallID"), status: try f.enumValue("status"),
                output: try f.optionalString("output"), exitCode: try f.optionalInt("exitCode")))
        case "diffUpdated": self = .diffUpdated(diff: try f.string("diff"))
        case "approvalRequested": self = .approvalRequested(try f.decode("approval"))
        case "approvalResolved":
            self = .approvalResolved(ApprovalResolution(
                approvalID: ApprovalID(try f.string("approvalID")), decision: try f.decode("decision"),
                decidedBy: try f.string("decidedBy"), decidedByLabel: try f.optionalString("decidedByLabel")))
        case "approvalWithdrawn":
            self = .approvalWithdrawn(approvalID: ApprovalID(try f.string("approvalID")), reason: try f.string("reason"))
        case "statusChanged": self = .statusChanged(status: try f.enumValue("status"), reason: try f.optionalString("reason"))
        case "usage": self = .usage(try f.decode("usage"))
        case "runFinished":
            self = .runFinished(RunFinished(
                isError: try f.bool("isError"), stopReason: try f.string("stopReason"), result: try f.optionalString("result"),
                usage: try f.optional("usage"), costUSD: try f.optionalDouble("costUSD"), durationMS: try f.optionalInt("durationMS")))
        case "notice":
            self = .notice(level: try f.enumValue("level"), message: try f.string("message"), code: try f.optionalString("code"))
        case "error": self = .error(code: try f.string("code"), message: try f.string("message"), preview: try f.optionalString("preview"))
        case "unknown": self = .unknown(raw: try f.string("raw"), nativeKind: try f.optionalString("nativeKind"))
        default: throw ShapeError("event: unknown kind \"\(kind)\"")
        }
    }
}

extension Usage: JSONRepresentable {
    public var json: JSONValue {
        var o: JSONObject = ["inputTokens": .int(inputTokens), "outputTokens": .int(outputTokens)]
        o.append("cacheReadTokens", ifPresent: cacheReadTokens.map(JSONValue.int))
        o.append("cacheWriteTokens", ifPresent: cacheWriteTokens.map(JSONValue.int))
        o.append("reasoningTokens", ifPresent: reasoningTokens.map(JSONValue.int))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "usage")
        self.init(
            inputTokens: try f.int("inputTokens"), outputTokens: try f.int("outputTokens"),
            cacheReadTokens: try f.optionalInt("cacheReadTokens"), cacheWriteTokens: try f.optionalInt("cacheWriteTokens"),
            reasoningTokens: try f.optionalInt("reasoningTokens"))
    }
}

extension SequencedEvent: JSONRepresentable {
    /// `{"seq","ts",<the event's fields, kind first>[,"rawOffset"]}`.
    public var json: JSONValue {
        var o: JSONObject = ["seq": .int(seq), "ts": .string(ts.description)]
        for entry in event.jsonObject { o.append(entry.key, entry.value) }
        o.append("rawOffset", ifPresent: rawOffset.map(JSONValue.int))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "transcript line")
        guard let ts = Timestamp(try f.string("ts")) else { throw ShapeError("transcript line: \"ts\" is not a timestamp") }
        self.init(seq: try f.int("seq"), ts: ts, event: try AgentEvent(json: json), rawOffset: try f.optionalInt("rawOffset"))
    }
}
