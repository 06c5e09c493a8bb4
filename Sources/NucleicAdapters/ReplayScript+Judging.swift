public import NucleicProtocol

/// How the replay agent judges whether a host line *means the same* as the recorded one.
///
/// Not byte equality: a host's own request ids, its prompts' wording and the fields it adds or
/// leaves out differ from a recording's without changing what happens next. What must match:
/// - Claude: `type`; for a `control_request` its `request.subtype`; for a `control_response` its
///   `response.subtype` and `request_id` (the agent's id, as recorded); for an approval answer
///   (a response with a `behavior`) the behavior (allow / deny), the `interrupt` flag, whether
///   `updatedInput` differs from the tool input the agent asked about (allow vs allowModified),
///   and AskUserQuestion's `answers` when the recording has them.
/// - Codex: a request's `method` (its id is the host's to choose), a notification's `method`, a
///   response's `id` (the agent's, as recorded), whether it is a `result` or an `error`, and the
///   result's `decision` or `answers`.
/// - A recorded host line that is not JSON (a test of the agent's error handling) must come back
///   as the same text.
extension ReplayScript {
    /// nil when `host` means the same as the recorded `in` record; notes the host's request id.
    mutating func judge(_ host: LineFramer.Output, against record: Record) -> ReplayDivergence? {
        let expected = describeRecorded(record.line)
        func divergence(_ kind: ReplayDivergence.Kind, _ got: String, expected: String = expected) -> ReplayDivergence {
            ReplayDivergence(kind, record: record.number, expected: expected, got: got)
        }
        let bytes: [UInt8]
        switch host {
        case .overLimit(_, let byteCount):
            return divergence(.malformed, "a line of \(byteCount) bytes, over the line limit")
        case .line(let line):
            bytes = line
        }
        guard let recorded = try? JSONParser.parse(record.line) else {
            // The recording tests the agent with a line that is not JSON: the host must send it again.
            return Self.trimmed(bytes) == Self.trimmed(Array(record.line.utf8))
                ? nil : divergence(.mismatch, Self.quotedPreview(bytes))
        }
        let message: JSONValue
        do { message = try JSONParser.parse(bytes) } catch {
            return divergence(.malformed, "a line that is not JSON (\(error)): \(Self.quotedPreview(bytes))")
        }
        guard case .object = message else {
            return divergence(.malformed, "JSON that is not a message object: \(Self.quotedPreview(bytes))")
        }
        let result: (kind: ReplayDivergence.Kind, got: String, expected: String?)?
        switch backend {
        case .claude: result = judgeClaude(message, recorded)
        case .codex: result = judgeCodex(message, recorded, resultKeys: ["decision", "answers"])
        case .acp: result = judgeCodex(message, recorded, resultKeys: ["outcome"])
        }
        return result.map { divergence($0.kind, $0.got, expected: $0.expected ?? expected) }
    }

    // MARK: Claude

    private mutating func judgeClaude(_ host: JSONValue, _ recorded: JSONValue) -> (kind: ReplayDivergence.Kind, got: String, expected: String?)? {
        let type = recorded["type"]?.stringValue
        guard host["type"]?.stringValue == type else { return (.mismatch, describeClaude(host), nil) }
        switch type {
        case "control_request":
            guard host["request"]?["subtype"]?.stringValue == recorded["request"]?["subtype"]?.stringValue else {
                return (.mismatch, describeClaude(host), nil)
            }
            guard let recordedID = recorded["request_id"], !recordedID.isNull else { return nil }
            guard let hostID = host["request_id"], !hostID.isNull else {
                return (.mismatch, describeClaude(host) + " without a request_id", nil)
            }
            mapHostRequest(recorded: recordedID, actual: hostID)
            return nil
        case "control_response":
            let r = recorded["response"] ?? .null, h = host["response"] ?? .null
            guard h["subtype"]?.stringValue == r["subtype"]?.stringValue else { return (.mismatch, describeClaude(host), nil) }
            guard Self.sameID(h["request_id"], r["request_id"]) else {
                return (.mismatch, "an answer to request \(Self.idText(h["request_id"])) (the agent asked with \(Self.idText(r["request_id"])))", nil)
            }
            guard r["subtype"]?.stringValue == "success", let recordedAnswer = r["response"], recordedAnswer["behavior"] != nil else { return nil }
            let original = r["request_id"].flatMap { agentRequests[Self.idKey($0)] }.flatMap { $0.objectValue != nil ? $0 : nil }
            let want = ClaudeAnswer(recordedAnswer, original: original)
            let got = ClaudeAnswer(h["response"] ?? .null, original: original)
            return want.isSame(as: got) ? nil : (.mismatch, got.brief, nil)
        default:
            return nil
        }
    }

    /// A Claude approval answer (`{"behavior":"allow","updatedInput":…}` or
    /// `{"behavior":"deny","message":…,"interrupt":true}`), reduced to what it means.
    struct ClaudeAnswer {
        var behavior: String?
        var interrupt: Bool
        /// Whether `updatedInput` differs from the input the agent asked about; nil when that
        /// input is unknown (an answer to a request the recording never showed).
        var modified: Bool?
        /// AskUserQuestion's `updatedInput.answers`.
        var answers: JSONValue?
        var message: String?

        init(_ answer: JSONValue, original: JSONValue?) {
            behavior = answer["behavior"]?.stringValue
            interrupt = answer["interrupt"]?.boolValue ?? false
            let updated = answer["updatedInput"]
            modified = original.map { original in updated.map { !ReplayScript.sameJSON($0, original) } ?? false }
            answers = updated?["answers"]
            message = answer["message"]?.stringValue
        }

        func isSame(as other: ClaudeAnswer) -> Bool {
            guard behavior == other.behavior, interrupt == other.interrupt else { return false }
            guard behavior == "allow" else { return true }
            if let answers {
                return other.answers.map { ReplayScript.sameJSON($0, answers) } ?? false
            }
            return modified == nil || other.modified == nil || modified == other.modified
        }

        /// How the recording's answer reads: "an approval answer allowing with a modified input".
        var expectation: String {
            switch behavior {
            case "allow":
                if let answers { return "an approval answer with the answers \(ReplayScript.preview(answers))" }
                switch modified {
                case true?: return "an approval answer allowing with a modified input"
                case false?: return "an approval answer allowing the input unchanged"
                case nil: return "an approval answer allowing"
                }
            case "deny": return interrupt ? "an approval answer denying and interrupting the turn" : "an approval answer denying"
            case let other?: return "an approval answer with behavior \"\(other)\""
            case nil: return "an approval answer"
            }
        }

        /// How the host's answer reads: `deny ("no")`, `allow with a modified input`.
        var brief: String {
            let note = message.map { " (\(ReplayScript.quoted($0)))" } ?? ""
            switch behavior {
            case "allow":
                if let answers { return "allow with the answers \(ReplayScript.preview(answers))" }
                return modified == true ? "allow with a modified input" : modified == false ? "allow (input unchanged)" : "allow"
            case "deny": return (interrupt ? "deny and interrupt" : "deny") + note
            case let other?: return "behavior \"\(other)\"" + note
            case nil: return "an answer without a behavior"
            }
        }
    }

    func describeClaude(_ message: JSONValue) -> String {
        switch message["type"]?.stringValue {
        case "user": return "a user message"
        case "control_request":
            return "a control request \(Self.quoted(message["request"]?["subtype"]?.stringValue ?? "without a subtype"))"
        case "control_response":
            let response = message["response"] ?? .null
            let id = Self.idText(response["request_id"])
            if response["subtype"]?.stringValue == "success", let answer = response["response"], answer["behavior"] != nil {
                let original = response["request_id"].flatMap { agentRequests[Self.idKey($0)] }.flatMap { $0.objectValue != nil ? $0 : nil }
                return ClaudeAnswer(answer, original: original).expectation
            }
            switch response["subtype"]?.stringValue {
            case "success": return "a successful control response to request \(id)"
            case "error": return "an error control response to request \(id)"
            case let other: return "a control response (subtype \(Self.quoted(other ?? "missing"))) to request \(id)"
            }
        case let type?: return "a \(Self.quoted(type)) message"
        case nil: return "a message without a type"
        }
    }

    // MARK: Codex

    /// The JSON-RPC shape of a Codex line.
    enum CodexShape {
        case request(method: String, id: JSONValue)
        case notification(method: String)
        case response(id: JSONValue)
        case other

        init(_ message: JSONValue) {
            let id = message["id"].flatMap { $0.isNull ? nil : $0 }
            switch (message["method"]?.stringValue, id) {
            case (let method?, let id?): self = .request(method: method, id: id)
            case (let method?, nil): self = .notification(method: method)
            case (nil, let id?): self = .response(id: id)
            case (nil, nil): self = .other
            }
        }
    }

    /// Codex and ACP (both JSON-RPC): requests and notifications by method, responses by the
    /// agent's id, result or error, and the `resultKeys` of the result when the recording has
    /// them (Codex `decision`, `answers`; ACP a permission's `outcome`).
    private mutating func judgeCodex(_ host: JSONValue, _ recorded: JSONValue, resultKeys: [String]) -> (kind: ReplayDivergence.Kind, got: String, expected: String?)? {
        switch (CodexShape(recorded), CodexShape(host)) {
        case (.request(let method, let recordedID), .request(let hostMethod, let hostID)):
            guard method == hostMethod else { return (.mismatch, describeCodex(host), nil) }
            mapHostRequest(recorded: recordedID, actual: hostID)
            return nil
        case (.notification(let method), .notification(let hostMethod)):
            return method == hostMethod ? nil : (.mismatch, describeCodex(host), nil)
        case (.response(let recordedID), .response(let hostID)):
            guard Self.sameID(hostID, recordedID) else {
                return (.mismatch, "a response to request \(Self.idText(hostID)) (the agent asked with \(Self.idText(recordedID)))", nil)
            }
            guard (host["error"] != nil) == (recorded["error"] != nil), (host["result"] != nil) == (recorded["result"] != nil) else {
                return (.mismatch, describeCodex(host), nil)
            }
            let want = recorded["result"] ?? .null, got = host["result"] ?? .null
            for key in resultKeys {
                guard let value = want[key] else { continue }
                guard let hostValue = got[key] else { return (.mismatch, "a result without a \(key)", nil) }
                if !Self.sameJSON(value, hostValue) { return (.mismatch, "\(key) \(Self.preview(hostValue))", nil) }
            }
            return nil
        case (.other, .other):
            return nil
        default:
            return (.mismatch, describeCodex(host), nil)
        }
    }

    func describeCodex(_ message: JSONValue) -> String {
        switch CodexShape(message) {
        case .request(let method, _): return "a request \(Self.quoted(method))"
        case .notification(let method): return "a notification \(Self.quoted(method))"
        case .response(let id):
            if message["error"] != nil { return "an error response to request \(Self.idText(id))" }
            let result = message["result"] ?? .null
            if let decision = result["decision"] { return "an approval answer to request \(Self.idText(id)) with decision \(Self.preview(decision))" }
            if let answers = result["answers"] { return "an answer to request \(Self.idText(id)) with the answers \(Self.preview(answers))" }
            return "a result for request \(Self.idText(id))"
        case .other: return "a message that is neither a request, a notification nor a response"
        }
    }

    // MARK: Descriptions

    /// A recorded host line in words, for messages.
    func describeRecorded(_ line: String) -> String {
        guard let message = try? JSONParser.parse(line) else { return "the line \(Self.quotedPreview(Array(line.utf8)))" }
        return describeJSON(message)
    }

    /// A host line in words, for messages.
    func describeHost(_ output: LineFramer.Output) -> String {
        switch output {
        case .overLimit(_, let byteCount): return "a line of \(byteCount) bytes, over the line limit"
        case .line(let bytes):
            guard let message = try? JSONParser.parse(bytes) else { return "the line \(Self.quotedPreview(bytes))" }
            return describeJSON(message)
        }
    }

    private func describeJSON(_ message: JSONValue) -> String {
        guard case .object = message else { return "the JSON \(Self.preview(message))" }
        switch backend {
        case .claude: return describeClaude(message)
        case .codex, .acp: return describeCodex(message)
        }
    }

    static func idText(_ id: JSONValue?) -> String {
        guard let id, !id.isNull else { return "(no id)" }
        return JSONWriter.string(id)
    }

    static func sameID(_ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch (a, b) {
        case (nil, nil): true
        case (let a?, let b?): idKey(a) == idKey(b)
        default: false
        }
    }

    /// `"text"` as JSON writes it, shortened.
    static func quoted(_ text: String) -> String { preview(.string(text)) }

    /// Compact JSON, at most about 120 characters.
    static func preview(_ value: JSONValue) -> String {
        let text = JSONWriter.string(value)
        return text.count > 120 ? String(text.prefix(120)) + "…" : text
    }

    static func quotedPreview(_ bytes: [UInt8]) -> String {
        quoted(String(decoding: bytes.prefix(480), as: UTF8.self))
    }

    /// Bytes without surrounding whitespace (a `\r` of CRLF, a trailing space).
    static func trimmed(_ bytes: [UInt8]) -> ArraySlice<UInt8> {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
        var slice = bytes[...]
        while let first = slice.first, isSpace(first) { slice = slice.dropFirst() }
        while let last = slice.last, isSpace(last) { slice = slice.dropLast() }
        return slice
    }

    /// JSON equality as a reader sees it: object keys in any order, `1` equal to `1.0`.
    static func sameJSON(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            return x.allSatisfy { entry in y[entry.key].map { sameJSON(entry.value, $0) } ?? false }
        case (.array(let x), .array(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { sameJSON($0, $1) }
        case (.int, .double), (.double, .int):
            return a.doubleValue == b.doubleValue
        default:
            return a == b
        }
    }
}
