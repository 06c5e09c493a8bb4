import Testing
@testable import NucleicWire
import NucleicTestSupport

/// The decoder against bad input: truncation, trailing bytes, malformed items, limits, fuzz.
@Suite struct CBORDecoderTests {
    /// Valid encodings: every RFC example plus seeded random values.
    static func validEncodings() -> [[UInt8]] {
        var rng = SeededGenerator(seed: 0xC0FF_EE01)
        let generator = ValueGenerator()
        let vectors = (CBORVectorTests.encodable + CBORVectorTests.decodeOnly).map { bytes(hex: $0.hex) }
        return vectors + (0..<300).map { _ in CBOREncoder.encode(generator.value(using: &rng)) }
    }

    @Test func everyPrefixIsTruncated() {
        for encoding in Self.validEncodings() {
            for end in 0..<encoding.count {
                let error = decodeError(Array(encoding[..<end]))
                #expect(error?.code == .truncated, "prefix \(end) of \(hexString(encoding)): \(String(describing: error))")
                if let offset = error?.offset { #expect(offset <= end) }
            }
        }
    }

    @Test func passesTheDecoderVerifier() throws {
        for encoding in Self.validEncodings().prefix(120) {
            let value = try CBORDecoder.decode(encoding)
            try DecoderVerifier.verifyMessage(encoding, expected: value, trailing: [[0x00], [0xFF], [0x60], encoding]) {
                try CBORDecoder.decode($0)
            }
        }
    }

    @Test func trailingBytesAreRejected() {
        var rng = SeededGenerator(seed: 7)
        for encoding in Self.validEncodings() {
            for extra in [[0x00], [0xff], [0x60], encoding] as [[UInt8]] {
                let error = decodeError(encoding + extra)
                #expect(error?.code == .trailingBytes, "\(hexString(encoding)) + \(hexString(extra))")
                #expect(error?.offset == encoding.count)
            }
            let random = (0..<Int.random(in: 1...4, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(decodeError(encoding + random)?.code == .trailingBytes)
        }
    }

    @Test func readsFromSlicesAndNonContiguousCollections() throws {
        let value: CBORValue = ["type": "hello", "v": [1, 2.5, "é"]]
        let encoding = CBOREncoder.encode(value)
        let padded = [0xff, 0xff] + encoding + [0xff]
        let slice = padded[2..<(2 + encoding.count)]
        #expect(try CBORDecoder.decode(slice) == value)
        #expect(try CBORDecoder.decode(encoding.lazy.map { $0 }) == value)
        // Offsets count from the start of the slice, not of the array under it.
        let error = decodeError(Array(padded[2...]))
        #expect(error?.offset == encoding.count)
        #expect(throws: CBORError.self) { try CBORDecoder.decode(padded[2...]) }
    }

    @Test(arguments: [
        ("1c", CBORError.Code.malformed), ("1d", .malformed), ("1e", .malformed), ("5c", .malformed), ("fc", .malformed),
        ("ff", .malformed), ("1f", .malformed), ("3f", .malformed), ("df01", .malformed), ("81ff", .malformed),
        ("f800", .malformed), ("f81f", .malformed), ("f0", .unsupported), ("e0", .unsupported), ("f3", .unsupported),
        ("f820", .unsupported), ("f8ff", .unsupported),
        ("5f6161ff", .malformed), ("5f5f4100ffff", .malformed), ("7f4100ff", .malformed), ("5f00ff", .malformed),
        ("bf6161ff", .malformed), ("a16161ff", .malformed), ("9f", .truncated), ("bf6161", .truncated), ("5f", .truncated),
        ("", .truncated), ("18", .truncated), ("1b00000000", .truncated), ("62", .truncated), ("f9", .truncated), ("fb0000", .truncated),
        ("c1", .truncated),
    ])
    func rejectsMalformedInput(_ hex: String, _ code: CBORError.Code) {
        let error = decodeError(bytes(hex: hex))
        #expect(error?.code == code, "\(hex): \(String(describing: error))")
        #expect(error?.offset != nil)
    }

    @Test(arguments: [
        "62c328",  // 0xc3 then a non-continuation byte
        "62c080",  // overlong NUL
        "63eda080",  // UTF-16 surrogate D800
        "64f4908080",  // above U+10FFFF
        "6180",  // lone continuation byte
        "62e6b0",  // character cut short
        "61ff",
        "7f61c361bcff",  // ü split across two chunks: each chunk must be valid alone
        "7f62c328ff",
    ])
    func rejectsInvalidUTF8(_ hex: String) {
        #expect(decodeError(bytes(hex: hex))?.code == .invalidUTF8, "\(hex)")
    }

    @Test func acceptsAllOfUnicode() throws {
        let text = "\u{0}\u{7f}\u{80}\u{7ff}\u{800}\u{d7ff}\u{e000}\u{fffd}\u{ffff}\u{10000}\u{10ffff}"
        #expect(try decode(CBOREncoder.encode(.text(text))) == .text(text))
    }

    @Test func rejectsDuplicateKeys() {
        let error = decodeError(bytes(hex: "a201020103"))
        #expect(error?.code == .duplicateKey)
        #expect(error?.offset == 3)
        #expect(decodeError(bytes(hex: "a2616101616102"))?.code == .duplicateKey)
        #expect(decodeError(bytes(hex: "bf616101616102ff"))?.code == .duplicateKey)
        // Structured keys compare as values, whatever their wire form.
        #expect(decodeError(bytes(hex: "a282010201820102" + "02"))?.code == .duplicateKey)
        #expect(decodeError(bytes(hex: "a2f93c0001fb3ff000000000000002"))?.code == .duplicateKey)
        // Every NaN is the same key (they all encode as one NaN).
        #expect(decodeError(bytes(hex: "a2f97e0001fb7ff800000000000102"))?.code == .duplicateKey)
        // Different types are different keys: 1, 1.0, "1", h'01', true; so are 0.0 and -0.0.
        #expect(throws: Never.self) { try decode(bytes(hex: "a501f4f93c00f46131f44101f4f5f4")) }
        #expect(throws: Never.self) { try decode(bytes(hex: "a2f90000f4f98000f4")) }
    }

    @Test func findsDuplicatesInLargeMaps() throws {
        for (size, duplicateAt) in [(20, 19), (100, 50), (1000, 999), (17, 16)] {
            var map = CBORMap()
            for i in 0..<size { map.append(.text("k\(i)"), CBORValue(i)) }
            #expect(try decode(CBOREncoder.encode(.map(map))) == .map(map))
            map.append(.text("k\(duplicateAt)"), 0)
            let encoding = CBOREncoder.encode(.map(map))
            let error = decodeError(encoding)
            #expect(error?.code == .duplicateKey)
            #expect(error?.offset == encoding.count - 1 - CBOREncoder.encode(.text("k\(duplicateAt)")).count)
        }
    }

    // MARK: Limits

    @Test func limitsDepth() throws {
        func nested(_ depth: Int, open: UInt8 = 0x81, leaf: UInt8 = 0x80) -> [UInt8] {
            Array(repeating: open, count: depth - 1) + [leaf]
        }
        #expect(decodeError(nested(128)) == nil)
        let error = decodeError(nested(129))
        #expect(error?.code == .tooDeep)
        #expect(error?.offset == 128)
        // Tags and maps count too; the limit is configurable.
        #expect(decodeError(Array(repeating: 0xc1, count: 128) + [0x01]) == nil)
        #expect(decodeError(Array(repeating: 0xc1, count: 129) + [0x01])?.code == .tooDeep)
        #expect(decodeError(Array(repeating: 0xc1, count: 129))?.code == .tooDeep)
        #expect(decodeError(bytes(hex: "a161618180"), limits: .init(maxDepth: 3)) == nil)
        #expect(decodeError(bytes(hex: "a16161818180"), limits: .init(maxDepth: 3))?.code == .tooDeep)
        #expect(decodeError(bytes(hex: "9f9f9fffffff"), limits: .init(maxDepth: 2))?.code == .tooDeep)
        // A million open arrays fail at the limit, long before the stack could run out.
        #expect(decodeError(Array(repeating: 0x81, count: 1_000_000))?.code == .tooDeep)
        #expect(decodeError(Array(repeating: 0x9f, count: 1_000_000))?.code == .tooDeep)
    }

    @Test func hugeClaimedLengthsFailWithoutAllocating() {
        let unlimited = CBORDecoder.Limits(maxContainerLength: .max, maxStringLength: .max, maxItems: .max)
        for (head, tooLong) in [
            ("9b1000000000000000", CBORError.Code.containerTooLong), ("bb1000000000000000", .containerTooLong),
            ("9bffffffffffffffff", .containerTooLong), ("ba80000000", .containerTooLong),
            ("5b4000000000000000", .stringTooLong), ("7bffffffffffffffff", .stringTooLong), ("5a01000001", .stringTooLong),
        ] {
            #expect(decodeError(bytes(hex: head))?.code == tooLong, "\(head)")
            #expect(decodeError(bytes(hex: head + "00000000"))?.code == tooLong, "\(head)")
            // With no limits the bytes that remain decide, still before anything is reserved
            // (a claim beyond Int.max stays over any limit).
            let claim = UInt64(head.dropFirst(2), radix: 16)!
            let expected = claim > UInt64(Int.max) ? tooLong : .truncated
            #expect(decodeError(bytes(hex: head + "0000"), limits: unlimited)?.code == expected, "\(head)")
        }
        // A map needs two bytes per entry.
        #expect(decodeError(bytes(hex: "a3010203040506")) == nil)
        #expect(decodeError(bytes(hex: "a4010203040506"))?.code == .truncated)
    }

    @Test func limitsContainerLength() throws {
        let limits = CBORDecoder.Limits(maxContainerLength: 3)
        #expect(decodeError(bytes(hex: "83010203"), limits: limits) == nil)
        #expect(decodeError(bytes(hex: "8401020304"), limits: limits)?.code == .containerTooLong)
        #expect(decodeError(bytes(hex: "a3010203040506"), limits: limits) == nil)
        #expect(decodeError(bytes(hex: "a40102030405060708"), limits: limits)?.code == .containerTooLong)
        #expect(decodeError(bytes(hex: "9f010203ff"), limits: limits) == nil)
        #expect(decodeError(bytes(hex: "9f01020304ff"), limits: limits)?.code == .containerTooLong)
        #expect(decodeError(bytes(hex: "bf0102030405060708ff"), limits: limits)?.code == .containerTooLong)
    }

    @Test func limitsStringLength() throws {
        let limits = CBORDecoder.Limits(maxStringLength: 4)
        #expect(decodeError(bytes(hex: "6461626364"), limits: limits) == nil)
        #expect(decodeError(bytes(hex: "656162636465"), limits: limits)?.code == .stringTooLong)
        #expect(decodeError(bytes(hex: "450102030405"), limits: limits)?.code == .stringTooLong)
        // Indefinite-length strings are limited after joining their chunks.
        #expect(decodeError(bytes(hex: "5f420102420304ff"), limits: limits) == nil)
        #expect(decodeError(bytes(hex: "5f42010243030405ff"), limits: limits)?.code == .stringTooLong)
        #expect(decodeError(bytes(hex: "7f6261626263646165ff"), limits: limits)?.code == .stringTooLong)
    }

    @Test func limitsInputSizeAndItems() throws {
        let big = CBOREncoder.encode(.bytes(Array(repeating: 7, count: 16 << 20)))
        #expect(big.count > 16 << 20)
        let error = decodeError(big)
        #expect(error?.code == .inputTooLarge)
        #expect(error?.offset == 0)
        let justFits = CBOREncoder.encode(.bytes(Array(repeating: 7, count: (16 << 20) - 5)))
        #expect(justFits.count == 16 << 20)
        #expect(decodeError(justFits) == nil)
        #expect(decodeError(bytes(hex: "83010203"), limits: .init(maxInputSize: 3))?.code == .inputTooLarge)

        let items = CBORDecoder.Limits(maxItems: 4)
        #expect(decodeError(bytes(hex: "83010203"), limits: items) == nil)
        #expect(decodeError(bytes(hex: "8401020304"), limits: items)?.code == .tooManyItems)
        #expect(decodeError(bytes(hex: "a2010203"), limits: items)?.code == .truncated)
        #expect(decodeError(bytes(hex: "a201020304"), limits: items)?.code == .tooManyItems)
        #expect(decodeError(bytes(hex: "c1c1c101"), limits: items) == nil)
        #expect(decodeError(bytes(hex: "c1c1c1c101"), limits: items)?.code == .tooManyItems)
        // Default: a flood of tiny items stops at two million (three arrays of a million each).
        let million = [0x9a, 0x00, 0x10, 0x00, 0x00] + Array(repeating: UInt8(0), count: 1 << 20)
        let flood = [0x83] + million + million + million
        #expect(decodeError(flood)?.code == .tooManyItems)
    }

    @Test func errorsSayWhatAndWhere() {
        let error = decodeError(bytes(hex: "a1616162c328"))
        #expect(error == CBORError(.invalidUTF8, "the text string of 2 bytes is not valid UTF-8", offset: 3))
        #expect(error?.offset == 3)
        #expect(error?.description == "CBOR invalidUTF8 at byte 3: the text string of 2 bytes is not valid UTF-8")
        let truncated = decodeError(bytes(hex: "826161780a616263"))
        #expect(truncated?.offset == 3)
        #expect(truncated?.description == "CBOR truncated at byte 3: the text string claims 10 bytes but only 3 remain")
        #expect(decodeError(bytes(hex: "a201020103"))?.description == "CBOR duplicateKey at byte 3: the map already has the key 1")
        #expect(decodeError(Array(repeating: 0x81, count: 200))?.description == "CBOR tooDeep at byte 128: arrays, maps and tags are nested more than 128 deep")
        #expect(decodeError(bytes(hex: "9b1000000000000000"))?.description == "CBOR containerTooLong at byte 0: an array claims 1152921504606846976 elements, more than the limit of 1048576")
        #expect(decodeError(bytes(hex: "a40102"))?.description == "CBOR truncated at byte 0: a map claims 4 entries, more than the 2 bytes that remain could hold")
        #expect(decodeError(bytes(hex: "0000"))?.description == "CBOR trailingBytes at byte 1: 1 byte follows the data item that ends here; a message is exactly one item")
    }

    // MARK: Fuzz

    @Test func randomBytesNeverCrash() throws {
        var rng = SeededGenerator(seed: 0xF022)
        var decoded = 0
        for _ in 0..<100_000 {
            let count = Int.random(in: 0...24, using: &rng)
            let input = (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
            if let value = try? decode(input) {
                decoded += 1
                #expect(try decode(CBOREncoder.encode(value)) == value)
            }
        }
        #expect(decoded > 1000)  // the fuzz reaches past the first byte often enough
    }

    @Test func mutatedEncodingsNeverCrash() throws {
        var rng = SeededGenerator(seed: 0xF023)
        let encodings = Self.validEncodings()
        for _ in 0..<30_000 {
            var input = encodings.randomElement(using: &rng)!
            for _ in 0...Int.random(in: 0..<3, using: &rng) {
                let i = input.isEmpty ? 0 : Int.random(in: 0..<input.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0 where !input.isEmpty: input[i] = UInt8.random(in: 0...255, using: &rng)
                case 1 where !input.isEmpty: input[i] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                case 2 where !input.isEmpty: input.remove(at: i)
                default: input.insert(UInt8.random(in: 0...255, using: &rng), at: i)
                }
            }
            // Whatever decodes must re-encode to something that decodes to the same value.
            if let value = try? decode(input) { #expect(try decode(CBOREncoder.encode(value)) == value) }
        }
    }
}
