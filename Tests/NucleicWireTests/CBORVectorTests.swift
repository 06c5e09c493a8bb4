import Testing
@testable import NucleicWire

/// RFC 8949 Appendix A, every example in Nucleic's subset.
@Suite struct CBORVectorTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var value: CBORValue
        var hex: String
        var testDescription: String { "\(value) = \(hex)" }
    }

    /// Examples whose value encodes to exactly these bytes (and decodes back to the value).
    static let encodable: [Vector] = [
        Vector(value: 0, hex: "00"),
        Vector(value: 1, hex: "01"),
        Vector(value: 10, hex: "0a"),
        Vector(value: 23, hex: "17"),
        Vector(value: 24, hex: "1818"),
        Vector(value: 25, hex: "1819"),
        Vector(value: 100, hex: "1864"),
        Vector(value: 1000, hex: "1903e8"),
        Vector(value: 1_000_000, hex: "1a000f4240"),
        Vector(value: 1_000_000_000_000, hex: "1b000000e8d4a51000"),
        Vector(value: .unsigned(18_446_744_073_709_551_615), hex: "1bffffffffffffffff"),
        // Bignums are tags Nucleic keeps uninterpreted: tag 2 / 3 over a byte string.
        Vector(value: .tagged(2, .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0])), hex: "c249010000000000000000"),
        Vector(value: .negative(18_446_744_073_709_551_615), hex: "3bffffffffffffffff"),  // -18446744073709551616
        Vector(value: .tagged(3, .bytes([1, 0, 0, 0, 0, 0, 0, 0, 0])), hex: "c349010000000000000000"),
        Vector(value: -1, hex: "20"),
        Vector(value: -10, hex: "29"),
        Vector(value: -100, hex: "3863"),
        Vector(value: -1000, hex: "3903e7"),
        Vector(value: 0.0, hex: "f90000"),
        Vector(value: -0.0, hex: "f98000"),
        Vector(value: 1.0, hex: "f93c00"),
        Vector(value: 1.1, hex: "fb3ff199999999999a"),
        Vector(value: 1.5, hex: "f93e00"),
        Vector(value: 65504.0, hex: "f97bff"),
        Vector(value: 100000.0, hex: "fa47c35000"),
        Vector(value: 3.4028234663852886e+38, hex: "fa7f7fffff"),
        Vector(value: 1.0e+300, hex: "fb7e37e43c8800759c"),
        Vector(value: 5.960464477539063e-8, hex: "f90001"),
        Vector(value: 0.00006103515625, hex: "f90400"),
        Vector(value: -4.0, hex: "f9c400"),
        Vector(value: -4.1, hex: "fbc010666666666666"),
        Vector(value: .float(.infinity), hex: "f97c00"),
        Vector(value: .float(.nan), hex: "f97e00"),
        Vector(value: .float(-.infinity), hex: "f9fc00"),
        Vector(value: false, hex: "f4"),
        Vector(value: true, hex: "f5"),
        Vector(value: nil, hex: "f6"),
        Vector(value: .undefined, hex: "f7"),
        Vector(value: .tagged(0, "2013-03-21T20:04:00Z"), hex: "c074323031332d30332d32315432303a30343a30305a"),
        Vector(value: .tagged(1, 1_363_896_240), hex: "c11a514b67b0"),
        Vector(value: .tagged(1, 1_363_896_240.5), hex: "c1fb41d452d9ec200000"),
        Vector(value: .tagged(23, .bytes([1, 2, 3, 4])), hex: "d74401020304"),
        Vector(value: .tagged(24, .bytes([0x64, 0x49, 0x45, 0x54, 0x46])), hex: "d818456449455446"),
        Vector(value: .tagged(32, "http://www.example.com"), hex: "d82076687474703a2f2f7777772e6578616d706c652e636f6d"),
        Vector(value: .bytes([]), hex: "40"),
        Vector(value: .bytes([1, 2, 3, 4]), hex: "4401020304"),
        Vector(value: "", hex: "60"),
        Vector(value: "a", hex: "6161"),
        Vector(value: "IETF", hex: "6449455446"),
        Vector(value: "\"\\", hex: "62225c"),
        Vector(value: "\u{00fc}", hex: "62c3bc"),
        Vector(value: "\u{6c34}", hex: "63e6b0b4"),
        Vector(value: "\u{10151}", hex: "64f0908591"),
        Vector(value: [], hex: "80"),
        Vector(value: [1, 2, 3], hex: "83010203"),
        Vector(value: [1, [2, 3], [4, 5]], hex: "8301820203820405"),
        Vector(value: .array((1...25).map { CBORValue($0) }), hex: "98190102030405060708090a0b0c0d0e0f101112131415161718181819"),
        Vector(value: [:], hex: "a0"),
        Vector(value: [1: 2, 3: 4], hex: "a201020304"),
        Vector(value: ["a": 1, "b": [2, 3]], hex: "a26161016162820203"),
        Vector(value: ["a", ["b": "c"]], hex: "826161a161626163"),
        Vector(value: ["a": "A", "b": "B", "c": "C", "d": "D", "e": "E"], hex: "a56161614161626142616361436164614461656145"),
    ]

    /// Examples that decode to the value but are not how the encoder writes it: wider floats
    /// than needed, and indefinite lengths.
    static let decodeOnly: [Vector] = [
        Vector(value: .float(.infinity), hex: "fa7f800000"),
        Vector(value: .float(.nan), hex: "fa7fc00000"),
        Vector(value: .float(-.infinity), hex: "faff800000"),
        Vector(value: .float(.infinity), hex: "fb7ff0000000000000"),
        Vector(value: .float(.nan), hex: "fb7ff8000000000000"),
        Vector(value: .float(-.infinity), hex: "fbfff0000000000000"),
        Vector(value: .bytes([1, 2, 3, 4, 5]), hex: "5f42010243030405ff"),
        Vector(value: "streaming", hex: "7f657374726561646d696e67ff"),
        Vector(value: [], hex: "9fff"),
        Vector(value: [1, [2, 3], [4, 5]], hex: "9f018202039f0405ffff"),
        Vector(value: [1, [2, 3], [4, 5]], hex: "9f01820203820405ff"),
        Vector(value: [1, [2, 3], [4, 5]], hex: "83018202039f0405ff"),
        Vector(value: [1, [2, 3], [4, 5]], hex: "83019f0203ff820405"),
        Vector(value: .array((1...25).map { CBORValue($0) }), hex: "9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff"),
        Vector(value: ["a": 1, "b": [2, 3]], hex: "bf61610161629f0203ffff"),
        Vector(value: ["a", ["b": "c"]], hex: "826161bf61626163ff"),
        Vector(value: ["Fun": true, "Amt": -2], hex: "bf6346756ef563416d7421ff"),
        // Arguments not in their shortest form are well-formed and accepted.
        Vector(value: 0, hex: "1800"),
        Vector(value: 1, hex: "1b0000000000000001"),
        Vector(value: "a", hex: "780161"),
        Vector(value: 1.0, hex: "fb3ff0000000000000"),
    ]

    @Test(arguments: encodable)
    func encodesAndDecodes(_ vector: Vector) throws {
        #expect(hexString(CBOREncoder.encode(vector.value)) == vector.hex)
        #expect(try decode(bytes(hex: vector.hex)) == vector.value)
    }

    @Test(arguments: decodeOnly)
    func decodesOtherForms(_ vector: Vector) throws {
        let decoded = try decode(bytes(hex: vector.hex))
        #expect(decoded == vector.value)
        // Re-encoding gives the preferred form, which decodes to the same value.
        #expect(try decode(CBOREncoder.encode(decoded)) == vector.value)
        #expect(CBOREncoder.encode(decoded).count <= vector.hex.count / 2)
    }

    @Test func integerRangeEnds() throws {
        #expect(CBORValue(Int64.min) == .negative(UInt64(Int64.max)))
        #expect(CBORValue(Int64.min).int64Value == Int64.min)
        #expect(CBORValue.negative(UInt64(Int64.max) + 1).int64Value == nil)
        #expect(CBORValue.negative(.max).integerValue == -18_446_744_073_709_551_616)
        #expect(CBORValue(exactly: -18_446_744_073_709_551_617) == nil)
        #expect(CBORValue(exactly: 18_446_744_073_709_551_616) == nil)
        #expect(CBORValue.unsigned(.max).int64Value == nil)
        #expect(CBORValue.unsigned(.max).uint64Value == .max)
        #expect(hexString(CBOREncoder.encode(CBORValue(Int64.min))) == "3b7fffffffffffffff")
    }

    /// The examples in docs/CBOR.md (the bytes cbor2.dumps gives for the same dicts).
    @Test func documentedExamples() throws {
        let examples: [(CBORValue, String)] = [
            (["type": "ping"], "a164747970656470696e67"),
            (
                ["type": "subscribe", "requestID": 7, "sessionID": "0190c0de-0000-7000-8000-000000000001", "sinceSeq": 120],
                "a464747970656973756273637269626569726571756573744944076973657373696f6e4944782430313930633064652d303030302d373030302d383030302d3030303030303030303030316873696e63655365711878"
            ),
            (
                ["type": "approvalRespond", "approvalID": "0190c0de-0000-7000-8000-00000000000a",
                 "decision": ["type": "allowModified", "input": ["command": "npm test", "timeout": -1]]],
                "a364747970656f617070726f76616c526573706f6e646a617070726f76616c4944782430313930633064652d"
                    + "303030302d373030302d383030302d303030303030303030303061686465636973696f6ea264747970656d61"
                    + "6c6c6f774d6f64696669656465696e707574a267636f6d6d616e64686e706d20746573746774696d656f7574" + "20"
            ),
            (3.0, "f94200"), (0.1, "fb3fb999999999999a"), (.float(-.infinity), "f9fc00"),
        ]
        for (value, hex) in examples {
            #expect(hexString(CBOREncoder.encode(value)) == hex)
            #expect(try decode(bytes(hex: hex)) == value)
        }
    }

    @Test func diagnosticNotation() {
        let value: CBORValue = ["type": "ping", "n": -3, "b": .bytes([0, 255]), "f": 1.5, "t": .tagged(1000, [nil, .undefined, .float(.nan)])]
        #expect(value.description == #"{"type": "ping", "n": -3, "b": h'00ff', "f": 1.5, "t": 1000([null, undefined, NaN])}"#)
        #expect(CBORValue.negative(.max).description == "-18446744073709551616")
    }
}
