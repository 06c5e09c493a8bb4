import NucleicProtocol
import Testing
@testable import NucleicWire
import NucleicTestSupport

/// JSON ⇄ CBOR, and reading and building message maps.
@Suite struct CBORJSONTests {
    @Test func jsonRoundTripsExactly() throws {
        let json = try JSONParser.parse(
            #"{"type":"approvalRespond","n":-9223372036854775808,"max":9223372036854775807,"f":3.0,"i":3,"e":1e-300,"s":"é😀\u0000","a":[null,true,false,[],{}],"o":{"z":1,"a":2}}"#)
        let cbor = CBORValue(json)
        #expect(cbor["f"] == .float(3.0))
        #expect(cbor["i"] == .unsigned(3))
        #expect(cbor["n"] == .negative(UInt64(Int64.max)))
        #expect(cbor["o"]?.mapValue?.keys == ["z", "a"])
        let back = try JSONValue(cbor: decode(CBOREncoder.encode(cbor)))
        #expect(back == json)
        #expect(JSONWriter.string(back) == JSONWriter.string(json))
    }

    @Test func randomJSONRoundTrips() throws {
        var rng = SeededGenerator(seed: 0x150)
        func random(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth < 4 ? 9 : 7), using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &rng))
            case 2: return .int(Int64.random(in: .min ... .max, using: &rng) >> Int64.random(in: 0..<64, using: &rng))
            case 3: return .double(Double.random(in: -1e6...1e6, using: &rng))
            case 4: return .double(Double(Int.random(in: -100...100, using: &rng)))
            case 5, 6: return .string(ValueGenerator().text(using: &rng))
            case 7: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in random(depth + 1) })
            default:
                var object = JSONObject()
                for i in 0..<Int.random(in: 0...4, using: &rng) { object.append("k\(i)\(ValueGenerator().text(using: &rng))", random(depth + 1)) }
                return .object(object)
            }
        }
        for _ in 0..<1000 {
            let json = random(0)
            #expect(try JSONValue(cbor: decode(CBOREncoder.encode(CBORValue(json)))) == json)
        }
    }

    @Test func refusesWhatJSONCannotSay() {
        let cases: [(CBORValue, String)] = [
            (.bytes([1]), "$: a byte string (1 bytes) has no JSON form"),
            (["input": ["files": ["a", "b", .tagged(1, 0)]]], "$.input.files[2]: a value with tag 1 has no JSON form"),
            ([1: "x"], "$: a map key 1 is not a text string"),
            (["n": .unsigned(UInt64(Int64.max) + 1)], "$.n: the integer 9223372036854775808 is outside the Int64 range"),
            ([.negative(UInt64(Int64.max) + 1)], "$[0]: the integer -9223372036854775809 is outside the Int64 range"),
        ]
        for (value, message) in cases {
            #expect(throws: CBORError(.notJSON, message, offset: nil)) { try JSONValue(cbor: value) }
        }
    }

    @Test func lossyCases() throws {
        #expect(try JSONValue(cbor: .undefined) == .null)
        #expect(try JSONValue(cbor: ["a": .undefined]) == ["a": nil])
        #expect(try JSONValue(cbor: decode([0xf9, 0x3c, 0x00])) == .double(1.0))
        #expect(try JSONValue(cbor: .float(.infinity)) == .double(.infinity))
        #expect(try JSONValue(cbor: decode([0x7f, 0x61, 0x61, 0x61, 0x62, 0xff])) == "ab")
    }

    @Test func buildsAndReadsMessages() throws {
        var message: CBORMap = ["type": "subscribe", "sessionID": "0190c0de-0000-7000-8000-000000000001"]
        message["sinceSeq"] = .unsigned(42)
        message.append("verbosity", ifPresent: nil)
        message["note"] = "x"
        message["note"] = nil
        let value = CBORValue.map(message)
        #expect(value.messageType == "subscribe")
        #expect(message.keys == ["type", "sessionID", "sinceSeq"])

        let decoded = try decode(CBOREncoder.encode(value))
        let fields = try CBORFields(decoded, "subscribe")
        #expect(try fields.text("sessionID") == "0190c0de-0000-7000-8000-000000000001")
        #expect(try fields.uint64("sinceSeq") == 42)
        #expect(try fields.int64("sinceSeq") == 42)
        #expect(try fields.optionalText("verbosity") == nil)
        #expect(try fields.bool("full", default: false) == false)
        #expect(throws: ShapeError("subscribe: \"sinceSeq\" must be a text string, got an integer")) { try fields.text("sinceSeq") }
        #expect(throws: ShapeError("subscribe: missing \"cursor\"")) { try fields.uint64("cursor") }
        #expect(throws: ShapeError("ping: expected a map, got an array")) { try CBORFields([1], "ping") }
        // Null and undefined count as absent.
        let withNulls = try CBORFields(["a": nil, "b": .undefined, "c": ["x": 1]], "m")
        #expect(withNulls["a"] == nil && withNulls["b"] == nil)
        #expect(try withNulls.optionalUInt64("a") == nil)
        #expect(try withNulls.json("c") == ["x": 1])
        #expect(throws: ShapeError("m: \"c\": $.x: a byte string (0 bytes) has no JSON form")) {
            try CBORFields(["c": ["x": .bytes([])]], "m").json("c")
        }
    }

    @Test func accessors() {
        let value: CBORValue = ["t": "x", "b": .bytes([1]), "a": [1, -2, 2.5], "y": true, "n": nil, "g": .tagged(7, 1)]
        #expect(value["t"]?.textValue == "x")
        #expect(value["b"]?.bytesValue == [1])
        #expect(value["a"]?[1]?.int64Value == -2)
        #expect(value["a"]?[1]?.uint64Value == nil)
        #expect(value["a"]?[2]?.doubleValue == 2.5)
        #expect(value["a"]?[0]?.doubleValue == 1)
        #expect(value["a"]?[3] == nil)
        #expect(value["y"]?.boolValue == true)
        #expect(value["n"]?.isNull == true)
        #expect(value["g"]?.taggedValue?.tag == 7)
        #expect(value["missing"] == nil)
        #expect(CBORValue.text("x")["t"] == nil)
        // Text lookups do not match other key types.
        let map: CBORMap = [1: "one", "1": "text one"]
        #expect(map["1"] == "text one")
        #expect(map[1] == "one")
    }
}
