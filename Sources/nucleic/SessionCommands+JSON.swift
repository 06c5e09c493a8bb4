import NucleicProtocol

/// What the write commands print under `--json`: the thing they acted on, named as the read
/// commands name it (`sessionID` and `handle`; an approval's `id`, `handle` and the decision).
extension SessionCommands {
    static func sessionReference(_ summary: SessionSummary, _ extra: JSONObject) -> JSONValue {
        var o: JSONObject = ["sessionID": .string(summary.sessionID.rawValue)]
        o.append("handle", ifPresent: summary.handle.map(JSONValue.string))
        for entry in extra.entries { o.append(entry.key, entry.value) }
        return .object(o)
    }

    static func decided(_ approval: ApprovalRequest, _ decision: Decision, always: ApprovalScope?) -> JSONValue {
        var o: JSONObject = ["approvalID": .string(approval.id.rawValue)]
        o.append("handle", ifPresent: approval.handle.map(JSONValue.string))
        o.append("sessionID", approval.sessionID.map { .string($0.rawValue) } ?? .null)
        o.append("toolName", .string(approval.toolName))
        o.append("decision", decision.json)
        o.append("always", ifPresent: always?.json)
        return .object(o)
    }
}
