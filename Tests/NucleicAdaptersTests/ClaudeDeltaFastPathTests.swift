import Testing
@testable import NucleicAdapters
import NucleicProtocol
import NucleicTestSupport

/// The delta fast path (`ClaudeCodec.streamDelta`) against the full parse (`receiveParsed`): two
/// codecs fed the same lines, one each way, must give the same output for every line, whatever
/// the line's key order, spacing, escapes, duplicates or damage.
@Suite struct ClaudeDeltaFastPathTests {
    let now = Timestamp(millisecondsSince1970: 1_000)

    static let tail = #","session_id":"00000000-0000-4000-8000-000000000001","parent_tool_use_id":null,"uuid":"00000000-0000-4000-8000-000000000009"}"#
    static func delta(_ index: Int, _ delta: String) -> String {
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":\#(index),"delta":\#(delta)}"# + tail
    }

    static let start: [String] = [
        #"{"type":"stream_event","event":{"type":"message_start","message":{"id":"m","content":[]}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_start","index":2,"content_block":{"type":"thinking","thinking":""}}}"#,
    ]
    static let end: [String] = [
        #"{"type":"stream_event","event":{"type":"content_block_stop","index":1}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
    ]

    /// Delta lines in the shapes Claude Code writes, and in shapes it might.
    static let lines: [String] = [
        delta(0, #"{"type":"text_delta","text":"Hello"}"#),
        delta(0, #"{"type":"text_delta","text":"line\nwith \"quotes\", tabs\t, caf\u00e9 and \ud83d\ude00 and a lone \ud800."}"#),
        delta(0, #"{"type":"text_delta","text":"café — → ✓ 日本語 😀"}"#),
        delta(0, #"{"type":"text_delta","text":""}"#),
        delta(1, #"{"type":"input_json_delta","partial_json":"{\"comm"}"#),
        delta(1, #"{"type":"input_json_delta","partial_json":""}"#),
        delta(1, #"{"type":"input_json_delta","partial_json":"and\": \"ls\"}"}"#),
        delta(2, #"{"type":"thinking_delta","thinking":"Let me think."}"#),
        delta(2, #"{"type":"signature_delta","signature":"EqQBCkYIAxgCKkB"}"#),
        delta(0, #"{"type":"citations_delta","citation":{}}"#),
        delta(7, #"{"type":"text_delta","text":"no such block"}"#),
        delta(7, #"{"type":"input_json_delta","partial_json":"no such block"}"#),
        // Key orders and spacing.
        #"{"type":"stream_event","event":{"delta":{"text":"first","type":"text_delta"},"index":0,"type":"content_block_delta"}}"#,
        #"{"type":"stream_event","session_id":"s","event":{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"x"}}}"#,
        #"{"type":"stream_event", "event" : { "type" : "content_block_delta" , "index" : 0 , "delta" : { "type" : "text_delta" , "text" : "spaced" } } }  "#,
        #"{"event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"event first"}},"type":"stream_event"}"#,
        #" {"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"leading space"}}}"#,
        // Extra fields of every kind, skipped.
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"extra":[1,-2.5e3,true,false,null,{"a":[[]]},"s\"\u0041"],"delta":{"type":"text_delta","n":0,"text":"extra"}},"x":{}}"#,
        // Escapes and non-ASCII in keys: the full path decides.
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"t\u0079pe":"text_delta","text":"escaped key"}}}"#,
        #"{"t\u0079pe":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"escaped top key"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"typé":"text_delta","text":"non-ASCII key"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"kelvin","\u212A":1}}}"#,
        // Escaped values of the compared fields.
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text\u005fdelta","text":"escaped kind"}}}"#,
        #"{"type":"stream_e\u0076ent","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"escaped type"}}}"#,
        // Duplicates: the first wins in the full path.
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"one","text":"two"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"index":1,"delta":{"type":"text_delta","text":"two indexes"}}}"#,
        #"{"type":"stream_event","type":"user","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"two types"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}},"event":{"type":"ping"}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","type":"thinking_delta","text":"a","thinking":"b"}}}"#,
        // Other types and shapes.
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":1.0,"delta":{"type":"text_delta","text":"double index"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":-1,"delta":{"type":"text_delta","text":"negative"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":99999999999999999999,"delta":{"type":"text_delta","text":"huge"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"no index"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":"0","delta":{"type":"text_delta","text":"string index"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":7}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":"text_delta"}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0}}"#,
        #"{"type":"stream_event","event":{"type":"ping"}}"#,
        #"{"type":"stream_event","event":null}"#,
        #"{"type":"stream_event"}"#,
        #"{"type":1,"event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"t"}}}"#,
        // Damage: the full path reports it.
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"trailing comma"},}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}} garbage"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},"uuid":"bad \q escape"}"#,
        "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}},\"uuid\":\"control \u{01} char\"}",
        "{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"raw \t tab\"}}}",
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},"n":01}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},"n":tru}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},"n":"#
            + String(repeating: "[", count: 509) + String(repeating: "]", count: 509) + "}",
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},"n":"#
            + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}",
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}},"n":"#
            + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}",
    ]

    /// Feeds `lines` to a codec through `receive(bytes:)` (fast path first) and to one through
    /// the full parse only, expecting the same output line by line.
    func expectSameOutputs(_ lines: [[UInt8]], _ comment: String = "") {
        var fast = ClaudeCodec()
        var full = ClaudeCodec()
        for line in lines {
            let a = line.withUnsafeBufferPointer { fast.receive(bytes: $0, now: now) }
            let b = line.withUnsafeBufferPointer { full.receiveParsed(bytes: $0, now: now) }
            #expect(a.events == b.events, "\(comment) line: \(String(decoding: line, as: UTF8.self).prefix(300))")
            #expect(a.lines == b.lines)
        }
    }

    @Test func everyShapeGivesWhatTheFullParseGives() {
        let all = Self.start + Self.lines + Self.end
        expectSameOutputs(all.map { Array($0.utf8) })
    }

    @Test func deltasReallyTakeTheFastPath() {
        var codec = ClaudeCodec()
        for line in Self.start { _ = codec.receive(line: line, now: now) }
        for line in Self.lines.prefix(9) {
            #expect(Array(line.utf8).withUnsafeBufferPointer { codec.streamDelta($0) } != nil, "\(line)")
        }
        #expect(Array(Self.start[1].utf8).withUnsafeBufferPointer { codec.streamDelta($0) } == nil)
    }

    @Test func everyTruncationGivesWhatTheFullParseGives() {
        for line in Self.lines.prefix(8) {
            let bytes = Array(line.utf8)
            expectSameOutputs(Self.start.map { Array($0.utf8) } + (0...bytes.count).map { Array(bytes[..<$0]) })
        }
    }

    @Test func randomDamageGivesWhatTheFullParseGives() {
        var random = SeededGenerator(seed: 20)
        var batch: [[UInt8]] = Self.start.map { Array($0.utf8) }
        for round in 0..<20_000 {
            batch.append(random.damaged(Self.lines[round % 12]))
        }
        expectSameOutputs(batch, "damaged")
    }
}

/// The laid-out delta reader (`ClaudeCodec.readLaidOutDelta`, literal bytes where Claude Code
/// writes them) against the member-by-member one (`readDeltaMembers`): where the first reads a
/// line, the second reads the same from it; where it does not, nothing is lost (the codec goes on
/// to the second, then to the full parse, as `ClaudeDeltaFastPathTests` checks).
@Suite struct ClaudeLaidOutDeltaTests {
    let now = Timestamp(millisecondsSince1970: 1_000)

    /// The members Claude Code writes after the event (2.1.x, `--include-partial-messages`).
    static let claudeTail = #","session_id":"00000000-0000-4000-8000-000000000001","parent_tool_use_id":null,"uuid":"00000000-0000-4000-8000-000000000006","api_message_id":"msg_01ABCdef"}"#
    static func laidOut(_ index: Int, _ delta: String, tail: String = claudeTail) -> String {
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":\#(index),"delta":\#(delta)}"# + tail
    }

    /// Lines as Claude Code writes them: the laid-out reader reads each.
    static let claudeLines: [String] = [
        laidOut(0, #"{"type":"text_delta","text":"I will c"}"#),
        laidOut(0, #"{"type":"text_delta","text":"line\nwith \"quotes\", caf\u00e9 \ud83d\ude00 \ud800 café 😀"}"#),
        laidOut(0, #"{"type":"text_delta","text":""}"#),
        laidOut(1, #"{"type":"input_json_delta","partial_json":"{\"command\": \"ls"}"#),
        laidOut(1, #"{"type":"input_json_delta","partial_json":""}"#),
        laidOut(2, #"{"type":"thinking_delta","thinking":"Let me think."}"#),
        laidOut(12, #"{"type":"text_delta","text":"no api_message_id"}"#, tail: ClaudeDeltaFastPathTests.tail),
        laidOut(0, #"{"type":"text_delta","text":"no tail"}"#, tail: "}"),
        laidOut(0, #"{"type":"text_delta","text":"more after"}"#, tail: #","session_id":"s","parent_tool_use_id":null,"uuid":"u","api_message_id":"m","extra":[1,{"a":null}],"more":-2.5e3}"#),
        laidOut(0, #"{"type":"text_delta","text":"other order"}"#, tail: #","uuid":"u","session_id":"s","parent_tool_use_id":"toolu_1"}"#),
        laidOut(0, #"{"type":"text_delta","text":"spaced tail"}"#, tail: #" , "session_id" : "s" , "uuid":"u" } "#),
        laidOut(0, #"{"type":"text_delta","text":"escaped tail"}"#, tail: #","session_id":"s\"\u0041","uuid":"\n"}"#),
        laidOut(0, #"{"type":"text_delta","text":"session object"}"#, tail: #","session_id":{"a":["b"]},"parent_tool_use_id":null}"#),
        laidOut(0, #"{"type":"text_delta","text":"deepest"}"#, tail: #","uuid":"#
            + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}"),
    ]

    /// Lines it leaves to the member-by-member reader or to the full parse (which may refuse them).
    static let otherLines: [String] = [
        laidOut(2, #"{"type":"signature_delta","signature":"EqQBCkYIAxgCKkB"}"#),
        laidOut(0, #"{"type":"citations_delta","citation":{}}"#),
        laidOut(0, #"{"text":"key order","type":"text_delta"}"#),
        laidOut(0, #"{"type":"text_delta","text":"extra","n":1}"#),
        laidOut(0, #"{ "type":"text_delta","text":"space"}"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","type":"user"}"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","session_id":"s","event":{"type":"ping"}}"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","parent_tool_use_id":nullx}"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","parent_tool_use_id":null"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","session_id":"s",}"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","session_id":"s"} x"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","session_id":"bad \q"}"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","session_id":}"#),
        laidOut(0, #"{"type":"text_delta","text":"x"}"#, tail: #","uuid":"#
            + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}"),
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":1.5,"delta":{"type":"text_delta","text":"x"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":01,"delta":{"type":"text_delta","text":"x"}}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"},"index":1}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_stop","index":0}}"#,
        #"{"type":"stream_event","event":{"type":"content_block_d\u0065lta","index":0,"delta":{"type":"text_delta","text":"x"}}}"#,
        #"{"type":"stream_event","event":{"type":"message_stop"},"type":"x"}"#,
    ]

    /// The line through the laid-out reader and through the member-by-member one.
    static func readBothWays(_ line: [UInt8]) -> (laidOut: (ClaudeCodec.DeltaKind, Int64, String?)?, members: (ClaudeCodec.DeltaKind, Int64, String?)?) {
        line.withUnsafeBufferPointer { (ClaudeCodec.readLaidOutDelta($0), ClaudeCodec.readDeltaMembers($0)) }
    }

    /// Where the laid-out reader reads `line`, the member-by-member one reads the same.
    static func expectAgreement(_ line: [UInt8]) {
        let (laidOut, members) = readBothWays(line)
        guard let laidOut else { return }
        let text = String(decoding: line, as: UTF8.self).prefix(300)
        guard let members else { Issue.record("only the laid-out reader read: \(text)"); return }
        #expect(laidOut.0 == members.0 && laidOut.1 == members.1 && laidOut.2 == members.2, "\(text)")
    }

    @Test func claudeLinesTakeTheLaidOutReader() {
        for line in Self.claudeLines {
            let bytes = Array(line.utf8)
            #expect(Self.readBothWays(bytes).laidOut != nil, "\(line)")
            Self.expectAgreement(bytes)
        }
        for line in Self.otherLines {
            #expect(Self.readBothWays(Array(line.utf8)).laidOut == nil, "\(line.prefix(200))")
        }
    }

    @Test func everyLineGivesWhatTheFullParseGives() {
        let all = ClaudeDeltaFastPathTests.start + Self.claudeLines + Self.otherLines + ClaudeDeltaFastPathTests.end
        ClaudeDeltaFastPathTests().expectSameOutputs(all.map { Array($0.utf8) })
    }

    @Test func everyTruncationAgreesAndGivesWhatTheFullParseGives() {
        for line in Self.claudeLines {
            let bytes = Array(line.utf8)
            let truncations = (0...bytes.count).map { Array(bytes[..<$0]) }
            for truncated in truncations { Self.expectAgreement(truncated) }
            ClaudeDeltaFastPathTests().expectSameOutputs(ClaudeDeltaFastPathTests.start.map { Array($0.utf8) } + truncations, "truncated")
        }
    }

    @Test func randomDamageAgreesAndGivesWhatTheFullParseGives() {
        var random = SeededGenerator(seed: 21)
        var batch: [[UInt8]] = ClaudeDeltaFastPathTests.start.map { Array($0.utf8) }
        for round in 0..<20_000 {
            let bytes = random.damaged(Self.claudeLines[round % Self.claudeLines.count])
            Self.expectAgreement(bytes)
            batch.append(bytes)
        }
        ClaudeDeltaFastPathTests().expectSameOutputs(batch, "damaged")
    }
}

/// A `user` line is parsed without its `tool_use_result` (`ClaudeCodec.parse`): the same value
/// as the full parse less that member, and the same error for a line that does not parse.
@Suite struct ClaudeUserLineParseTests {
    static let lines: [String] = [
        #"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"ok","is_error":false}]},"parent_tool_use_id":null,"session_id":"s","uuid":"u","tool_use_result":{"stdout":"ok\n","stderr":"","interrupted":false,"isImage":false}}"#,
        #"{"type":"user","tool_use_result":"first","message":{"content":"x"},"tool_use_result":[1,2,{"a":"\u00e9"}]}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":{"bad":tru}}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":"unterminated}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":{"a":1,}}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":[1 2]}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":1} x"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":"#
            + String(repeating: "[", count: 511) + String(repeating: "]", count: 511) + "}",
        #"{"type":"user","message":{"content":[]},"tool_use_result":"#
            + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}",
        #"{"type":"user","message":{"content":[]},"tool\u005fuse_result":{"kept":true}}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":{"stdout":"a\n\t\"b\" caf\u00e9 \ud83d\ude00 \ud800 \/ é"}}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":"bad \q escape"}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":"truncated \u12"}"#,
        #"{"type":"user","message":{"content":[]},"tool_use_result":"bad hex \ud800\u12g4"}"#,
        "{\"type\":\"user\",\"message\":{\"content\":[]},\"tool_use_result\":\"raw \u{01} control\"}",
        #"{"type":"user"}"#,
    ]

    @Test func parsesAsTheFullParseLessTheToolUseResult() {
        for line in Self.lines {
            let bytes = Array(line.utf8)
            let fast = Result { () throws(JSONParseError) -> JSONValue in try bytes.withUnsafeBufferPointer { b throws(JSONParseError) in try ClaudeCodec.parse(b) } }
            let full = Result { () throws(JSONParseError) -> JSONValue in
                let value = try JSONParser.parse(bytes)
                guard case .object(let object) = value else { return value }
                return .object(JSONObject(object.entries.filter { $0.key != "tool_use_result" }))
            }
            switch (fast, full) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(line.prefix(120))")
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(line.prefix(120))")
            default: Issue.record("one parse failed and the other did not: \(line.prefix(120))")
            }
        }
    }
}

/// SplitMix64: a seeded generator, the same sequence on every machine.
extension SeededGenerator {
    /// Bytes JSON is made of, and some that break UTF-8 or a line.
    static let damage = Array(#"{}[]:,"\ u0123456789abcdefnulltruefalse-+.eE"#.utf8) + [0x01, 0x7F, 0x80, 0xC3, 0xA9, 0xFF, 0x0A]

    /// `line` with one to three bytes replaced, removed or inserted at random places.
    mutating func damaged(_ line: String) -> [UInt8] {
        var bytes = Array(line.utf8)
        for _ in 0..<(1 + Int(next() % 3)) {
            let at = Int(next() % UInt64(bytes.count))
            switch next() % 3 {
            case 0: bytes[at] = Self.damage[Int(next() % UInt64(Self.damage.count))]
            case 1: bytes.remove(at: at)
            default: bytes.insert(Self.damage[Int(next() % UInt64(Self.damage.count))], at: at)
            }
        }
        return bytes
    }
}
