import NucleicTestSupport
import Testing
import NucleicProtocol

/// `JSONParser.read`, the pull reader: it accepts a text only when `parse` does, and what it
/// reads is what `parse` builds.
@Suite struct JSONParserReaderTests {
    /// Whether the reader, skipping the whole text, accepts it.
    static func skips(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            JSONParser.read(buffer) { (reader: inout JSONParser) throws(JSONParser.ReadRefused) -> Bool? in
                try reader.skipValue(depth: 0)
                return true
            } ?? false
        }
    }

    static func parses(_ bytes: [UInt8]) -> Bool { (try? JSONParser.parse(bytes)) != nil }

    @Test(arguments: [
        "", " ", "{", "[1,", #"{"a"}"#, #"{"a":}"#, "[1 2]", "01", "1.", "1e", "-", "tru", "nul", "[1,]", #"{"a":1,}"#,
        #""\x""#, #""\u12""#, #""\u12g4""#, "\"a\u{01}b\"", #""unterminated"#, "{} {}", "1 2",
        "{}", "[]", "0", "-0.5e+3", #""\ud83d\ude00\ud800\"\\\/\b\f\n\r\t""#, "caf\u{E9}", "\"caf\u{E9}\"",
        #" {"a":[1,{"b":null,"c":[true,false]}],"d":"e"} "#, "[" + String(repeating: "[", count: 510) + String(repeating: "]", count: 511),
        "[" + String(repeating: "[", count: 511) + String(repeating: "]", count: 512),
        "{\"a\":" + String(repeating: "{\"a\":", count: 510) + "1" + String(repeating: "}", count: 511),
        "{\"a\":" + String(repeating: "{\"a\":", count: 511) + "1" + String(repeating: "}", count: 512),
    ])
    func acceptsWhatParseAccepts(_ text: String) {
        let bytes = Array(text.utf8)
        #expect(Self.skips(bytes) == Self.parses(bytes), "\(text.prefix(80))")
    }

    @Test func randomTextsAreAcceptedAlike() {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array(#"{}[]:,"\ u0123456789abcdefnulltruefalse-+.eE"#.utf8) + [0x01, 0x80, 0xC3, 0xA9, 0xFF, 0x0A, 0x20]
        let seeds = [#"{"a":[1,2.5,{"b":"c\n"}],"d":null,"e":true}"#, #"[{"x":"\u00e9"},-1e9,false]"#, #""s\"t""#]
        for round in 0..<30_000 {
            var bytes = Array(seeds[round % seeds.count].utf8)
            if round % 4 == 0 {
                bytes = (0..<Int(random.next() % 24)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
            } else {
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    let at = Int(random.next() % UInt64(bytes.count + 1))
                    let b = alphabet[Int(random.next() % UInt64(alphabet.count))]
                    if at < bytes.count, random.next() % 2 == 0 { bytes[at] = b } else { bytes.insert(b, at: min(at, bytes.count)) }
                }
            }
            #expect(Self.skips(bytes) == Self.parses(bytes), "\(bytes)")
        }
    }

    /// Skipped strings have their escapes checked, not decoded: over strings made of escapes
    /// (valid, truncated, bad hex, surrogates whole, lone and half-written), raw bytes and quotes,
    /// the reader accepts exactly what `parse` accepts, alone and as members and elements.
    @Test func escapedStringsAreAcceptedAlike() {
        var random = SeededGenerator(seed: 11)
        let pieces = [#"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u0041"#, #"\u00e9"#, #"\uD83D"#, #"\ude00"#,
                      #"\ud800"#, #"\uDBFF\uDFFF"#, #"\u12"#, #"\u12g4"#, #"\uG000"#, #"\x"#, #"\'"#, #"\"#, #"\u"#, "\\\u{01}", "\\\u{E9}",
                      "a", "é", "😀", "\u{01}", "\t", #"""#, " ", "0", "f", "D8", "u"]
        for round in 0..<30_000 {
            var body = ""
            for _ in 0..<Int(random.next() % 6) { body += pieces[Int(random.next() % UInt64(pieces.count))] }
            let text = switch round % 3 {
            case 0: #"""# + body + #"""#
            case 1: #"{"k":""# + body + #"","n":1}"#
            default: #"["x",""# + body + #""]"#
            }
            let bytes = Array(text.utf8)
            #expect(Self.skips(bytes) == Self.parses(bytes), "\(text)")
        }
        // Every truncation of a long string with escapes and non-ASCII bytes, and bytes that are not UTF-8.
        let long = Array(#"{"a":"line\n\t\"quoted\" caf\u00e9 \ud83d\ude00 \ud800 é 😀 \/\b\f\r end","b":[]}"#.utf8)
        for n in 0...long.count {
            #expect(Self.skips(Array(long[..<n])) == Self.parses(Array(long[..<n])), "\(n)")
        }
        let notUTF8: [UInt8] = [0x22, 0xFF, 0xC3, 0x5C, 0x6E, 0x80, 0xE2, 0x82, 0x22]
        #expect(Self.skips(notUTF8) && Self.parses(notUTF8))
    }

    /// Members `s` (a string), `i` (an integer) and whether `k` is the string "kind", read with
    /// the reader; every other member skipped.
    static func readFields(_ bytes: [UInt8]) -> (String, Int64, Bool)? {
        bytes.withUnsafeBufferPointer { buffer in
            JSONParser.read(buffer) { (reader: inout JSONParser) throws(JSONParser.ReadRefused) -> (String, Int64, Bool)? in
                try reader.enterObject(depth: 1)
                var first = true
                var s = "", i: Int64 = 0, k = false
                while let key = try reader.nextKey(first: &first) {
                    switch String(decoding: key, as: UTF8.self) {
                    case "s": s = try reader.readString()
                    case "i": i = try reader.readInt()
                    case "k": k = reader.consumeString("kind")
                    default: try reader.skipValue(depth: 1)
                    }
                }
                return (s, i, k)
            }
        }
    }

    @Test func readsFieldsAsParseBuildsThem() throws {
        let text = #"{"s":"caf\u00e9 \ud83d\ude00\n","i":-42,"k":"kind","skip":[{"x":1}],"t\u0079pe":1}"#
        let parsed = try JSONParser.parse(text)
        let bytes = Array(text.utf8)
        let read = Self.readFields(bytes)
        // The escaped key is refused: the caller reads the text with `parse` instead.
        #expect(read == nil)
        let plain = Array(#"{"s":"caf\u00e9 \ud83d\ude00\n","i":-42,"k":"kind","skip":[{"x":1}]}"#.utf8)
        let again = Self.readFields(plain)
        #expect(again?.0 == parsed["s"]?.stringValue)
        #expect(again?.1 == parsed["i"]?.intValue)
        #expect(again?.2 == true)
    }
}
