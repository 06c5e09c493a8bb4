import Testing
@testable import NucleicProtocol
import NucleicTestSupport

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let v = try JSONParser.parse(#" {"a":[1,-2,3.5,1e3,true,false,null],"b":{"c":"d"},"e":"\u00e9\n\"x\"","big":18446744073709551616} "#)
        #expect(v["a"] == [1, -2, 3.5, 1000.0, true, false, nil])
        #expect(v["b"]?["c"] == "d")
        #expect(v["e"] == "é\n\"x\"")
        #expect(v["big"]?.doubleValue == 18446744073709551616.0)
        #expect(v.objectValue?.keys == ["a", "b", "e", "big"])
    }

    @Test func keepsIntegersExactAndKeyOrder() throws {
        let text = #"{"z":9007199254740993,"a":-9223372036854775808,"m":0}"#
        let v = try JSONParser.parse(text)
        #expect(v["z"] == .int(9_007_199_254_740_993))
        #expect(v["a"] == .int(Int64.min))
        #expect(JSONWriter.string(v) == text)
    }

    @Test func decodesSurrogatePairsAndLoneSurrogates() throws {
        #expect(try JSONParser.parse(#""\ud83d\ude00""#) == "😀")
        #expect(try JSONParser.parse(#""\ud83dx""#) == "\u{FFFD}x")
        #expect(try JSONParser.parse(#""\udc00""#) == "\u{FFFD}")
    }

    @Test(arguments: [
        "", " ", "{", "[1,", #"{"a"}"#, #"{"a":}"#, "[1 2]", "01", "1.", "1e", "-", "tru", "nul",
        #""abc"#, #""\x""#, #""\u12""#, "\"a\u{01}b\"", "{} {}", "[1]]", "{,}", "[,1]", #"{"a":1,}"#,
    ])
    func rejectsMalformedText(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(text) }
    }

    @Test func limitsNesting() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(deep) }
        let ok = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        _ = try JSONParser.parse(ok)
    }

    @Test func writerEscapesWhatJSONRequires() throws {
        let s: JSONValue = .string("quote\" back\\ nl\n tab\t bell\u{07} é 😀")
        let text = JSONWriter.string(s)
        #expect(text == #""quote\" back\\ nl\n tab\t bell\u0007 é 😀""#)
        #expect(try JSONParser.parse(text) == s)
    }

    @Test func roundTripsWhatItWrites() throws {
        let v: JSONValue = ["x": [1, 2.25, "s", ["k": nil]], "y": true, "z": -0.5]
        #expect(try JSONParser.parse(JSONWriter.bytes(v)) == v)
    }

    @Test func randomBytesNeverCrash() {
        var rng = SeededGenerator(seed: 42)
        let alphabet = Array(#"{}[]",:0123456789.eE+-truefalsn\u "#.utf8) + [0, 0x80, 0xC3, 0xFF, 0x0A]
        for _ in 0..<20_000 {
            let count = Int.random(in: 0..<40, using: &rng)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &rng)! }
            _ = try? JSONParser.parse(bytes)
        }
    }

    @Test(arguments: [
        #"{"type":"assistant","message":{"content":[{"type":"text","text":"hi \"there\" é \u00e9"}],"n":[1,-2.5e3,0]}}"#,
        #"[true,false,null,{},[],"",{"a":{"b":[1]}}]"#,
        #""a string with \n escapes \ud83d\ude00""#,
    ])
    func passesTheDecoderVerifier(text: String) throws {
        try DecoderVerifier.verifyMessage(Array(text.utf8), expected: try JSONParser.parse(text),
                                          trailing: [[0x00], [0xFF], Array(",1".utf8), Array(" x".utf8), Array("{}".utf8)]) {
            try JSONParser.parse($0)
        }
    }

    @Test func truncatedValidTextAlwaysFails() throws {
        let text = #"{"type":"assistant","message":{"content":[{"type":"text","text":"hi \"there\""}],"n":[1,2.5e3]}}"#
        let bytes = Array(text.utf8)
        _ = try JSONParser.parse(bytes)
        for cut in 0..<bytes.count {
            #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes[0..<cut]) }
        }
    }
}

