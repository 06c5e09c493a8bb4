public import NucleicProtocol

/// The fast path of the most frequent line: a `stream_event` `content_block_delta` (nine lines
/// in ten of a streamed turn). It reads the few fields the codec uses with `JSONParser.read` and
/// skips the rest (`session_id`, `uuid`, `parent_tool_use_id`, …) without building them, instead
/// of parsing the whole line into values and freeing them. Any other line, and any delta line of
/// a shape it does not expect, returns nil, and the full path reads the line as before: the
/// result is the same either way (ClaudeDeltaFastPathTests).
extension ClaudeCodec {
    /// What a delta line carries.
    enum DeltaKind { case inputJSON, text, thinking, signature }

    /// The events of a `content_block_delta` line, or nil when the full path must read it.
    mutating func streamDelta(_ line: UnsafeBufferPointer<UInt8>) -> [AgentEvent]? {
        // Claude Code writes `type` first; a line that does not start so takes the full path.
        guard line.count > 24, line[0] == UInt8(ascii: "{") else { return nil }
        guard let (kind, index, text) = Self.readLaidOutDelta(line) ?? Self.readDeltaMembers(line) else { return nil }
        switch kind {
        case .inputJSON: return appendToolInput(text!, index: index)
        case .text: return [.assistantText(text: text!, isPartial: true)]
        case .thinking: return [.reasoning(text: text!, isPartial: true)]
        case .signature: return []
        }
    }

    /// The start of every `stream_event` line as Claude Code writes it, up to its event's type.
    static let streamEventPrefix: StaticString = #"{"type":"stream_event","event":{"type":""#

    /// A delta line laid out as Claude Code writes it, matched as literal bytes:
    ///
    ///     {"type":"stream_event","event":{"type":"content_block_delta","index":N,
    ///      "delta":{"type":"text_delta","text":"…"}},"session_id":"…","parent_tool_use_id":null,
    ///      "uuid":"…","api_message_id":"…"}
    ///
    /// (on one line; `input_json_delta` with `partial_json` and `thinking_delta` with `thinking`
    /// alike). The event and its delta must be exactly so; the members after the event are
    /// matched by their known keys where they come as above, else read one by one, and a second
    /// `type` or `event` among them is refused. Nil when any part differs: `readDeltaMembers`
    /// then reads the line whatever its layout, and the full path takes what that leaves.
    static func readLaidOutDelta(_ line: UnsafeBufferPointer<UInt8>) -> (DeltaKind, Int64, String?)? {
        JSONParser.read(line) { (reader: inout JSONParser) throws(JSONParser.ReadRefused) -> (DeltaKind, Int64, String?)? in
            guard reader.consume(streamEventPrefix), reader.consume(#"content_block_delta","index":"#) else { return nil }
            let index = try reader.readInt()
            guard reader.consume(#","delta":{"type":""#) else { return nil }
            let kind: DeltaKind
            if reader.consume(#"input_json_delta","partial_json":"#) {
                kind = .inputJSON
            } else if reader.consume(#"text_delta","text":"#) {
                kind = .text
            } else if reader.consume(#"thinking_delta","thinking":"#) {
                kind = .thinking
            } else {
                return nil
            }
            let text = try reader.readString()
            guard reader.consume("}}") else { return nil }
            if reader.consume(#","session_id":"#) { try reader.skipValue(depth: 1) }
            _ = reader.consume(#","parent_tool_use_id":null"#)
            if reader.consume(#","uuid":"#) { try reader.skipValue(depth: 1) }
            if reader.consume(#","api_message_id":"#) { try reader.skipValue(depth: 1) }
            var first = false
            while let key = try reader.nextKey(first: &first) {
                guard !equal(key, "type"), !equal(key, "event") else { throw JSONParser.ReadRefused() }
                try reader.skipValue(depth: 1)
            }
            return (kind, index, text)
        }
    }

    /// A delta line in any layout, member by member; nil for another line (the full path's).
    static func readDeltaMembers(_ line: UnsafeBufferPointer<UInt8>) -> (DeltaKind, Int64, String?)? {
        // A line that starts as Claude Code writes one, with another event type: not a delta (the
        // reader below would refuse it at that type too, an escaped one included).
        let prefix = streamEventPrefix.utf8CodeUnitCount, delta: StaticString = #"content_block_delta""#
        if line.count >= prefix + delta.utf8CodeUnitCount, let base = line.baseAddress,
            JSONParser.equal(base, streamEventPrefix.utf8Start, prefix),
            !JSONParser.equal(base + prefix, delta.utf8Start, delta.utf8CodeUnitCount) {
            return nil
        }
        return JSONParser.read(line) { (reader: inout JSONParser) throws(JSONParser.ReadRefused) -> (DeltaKind, Int64, String?)? in
            guard reader.hasPrefix(#"{"type":"stream_event","#) else { return nil }
            try reader.enterObject(depth: 1)
            var first = true
            var sawType = false
            var delta: (DeltaKind, Int64, String?)?
            while let key = try reader.nextKey(first: &first) {
                if Self.equal(key, "type") {
                    guard !sawType else { throw JSONParser.ReadRefused() }
                    sawType = true
                    guard reader.consumeString("stream_event") else { return nil }
                } else if Self.equal(key, "event") {
                    guard delta == nil else { throw JSONParser.ReadRefused() }
                    guard let read = try Self.readDeltaEvent(&reader) else { return nil }
                    delta = read
                } else {
                    try reader.skipValue(depth: 1)
                }
            }
            return sawType ? delta : nil
        }
    }

    /// The `event` object of a delta line: its delta's kind, the block's index and the delta's
    /// text; nil when it is another event or a delta the fast path leaves to the full one.
    private static func readDeltaEvent(_ reader: inout JSONParser) throws(JSONParser.ReadRefused) -> (DeltaKind, Int64, String?)? {
        try reader.enterObject(depth: 2)
        var first = true
        var isDelta: Bool?
        var index: Int64?
        var delta: (DeltaKind, String?)?
        while let key = try reader.nextKey(first: &first) {
            if equal(key, "type") {
                guard isDelta == nil else { throw JSONParser.ReadRefused() }
                guard reader.consumeString("content_block_delta") else { return nil }
                isDelta = true
            } else if equal(key, "index") {
                guard index == nil else { throw JSONParser.ReadRefused() }
                index = try reader.readInt()
            } else if equal(key, "delta") {
                guard delta == nil else { throw JSONParser.ReadRefused() }
                guard let read = try readDelta(&reader) else { return nil }
                delta = read
            } else {
                try reader.skipValue(depth: 2)
            }
        }
        guard isDelta == true, let index, let (kind, text) = delta else { return nil }
        return (kind, index, text)
    }

    /// The `delta` object: its kind and the string it carries (`partial_json`, `text`,
    /// `thinking`; none for a signature); nil for any other delta, or one without its string.
    private static func readDelta(_ reader: inout JSONParser) throws(JSONParser.ReadRefused) -> (DeltaKind, String?)? {
        try reader.enterObject(depth: 3)
        var first = true
        var kind: DeltaKind?
        var sawType = false
        var partialJSON: String?, text: String?, thinking: String?
        var sawPartialJSON = false, sawText = false, sawThinking = false
        while let key = try reader.nextKey(first: &first) {
            if equal(key, "type") {
                guard !sawType else { throw JSONParser.ReadRefused() }
                sawType = true
                // In order of frequency, as in the full path; another kind takes the full path.
                if reader.consumeString("input_json_delta") {
                    kind = .inputJSON
                } else if reader.consumeString("text_delta") {
                    kind = .text
                } else if reader.consumeString("thinking_delta") {
                    kind = .thinking
                } else if reader.consumeString("signature_delta") {
                    kind = .signature
                } else {
                    return nil
                }
            } else if equal(key, "partial_json") {
                guard !sawPartialJSON else { throw JSONParser.ReadRefused() }
                sawPartialJSON = true
                partialJSON = try reader.readString()
            } else if equal(key, "text") {
                guard !sawText else { throw JSONParser.ReadRefused() }
                sawText = true
                text = try reader.readString()
            } else if equal(key, "thinking") {
                guard !sawThinking else { throw JSONParser.ReadRefused() }
                sawThinking = true
                thinking = try reader.readString()
            } else {
                try reader.skipValue(depth: 3)
            }
        }
        switch kind {
        case .inputJSON: return partialJSON.map { (.inputJSON, $0) }
        case .text: return text.map { (.text, $0) }
        case .thinking: return thinking.map { (.thinking, $0) }
        case .signature: return (.signature, nil)
        case nil: return nil
        }
    }

    /// Whether a raw key (ASCII, no escapes: `nextKey` refuses others) is `literal`.
    @inline(__always) static func equal(_ key: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard key.count == count else { return false }
        let bytes = literal.utf8Start
        for i in 0..<count where key[i] != bytes[i] { return false }
        return true
    }
}
