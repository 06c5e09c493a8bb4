import Testing
@testable import NucleicWire
import NucleicTestSupport

/// Encode → decode → encode on seeded random values, and the float widths exhaustively.
@Suite struct CBORRoundTripTests {
    @Test func randomValuesRoundTrip() throws {
        var rng = SeededGenerator(seed: 0x5EED_CB02)
        let generator = ValueGenerator(maxDepth: 5)
        for _ in 0..<2000 {
            let value = generator.value(using: &rng)
            let encoding = CBOREncoder.encode(value)
            let decoded = try decode(encoding)
            #expect(decoded == value, "\(value)")
            // Deterministic: the decoded value re-encodes to the same bytes.
            #expect(CBOREncoder.encode(decoded) == encoding)
            #expect(decoded.hashValue == value.hashValue)
        }
    }

    @Test func argumentsTakeTheShortestForm() {
        for (n, length) in [(0, 1), (23, 1), (24, 2), (255, 2), (256, 3), (65535, 3), (65536, 5), (0xffff_ffff, 5), (0x1_0000_0000, 9)] as [(UInt64, Int)] {
            #expect(CBOREncoder.encode(.unsigned(n)).count == length)
            #expect(CBOREncoder.encode(.negative(n)).count == length)
            #expect(CBOREncoder.encode(.tagged(n, nil)).count == length + 1)
        }
        #expect(CBOREncoder.encode(.text(String(repeating: "x", count: 23)))[0] == 0x77)
        #expect(CBOREncoder.encode(.text(String(repeating: "x", count: 24))).prefix(2) == [0x78, 24])
        #expect(CBOREncoder.encode(.bytes(Array(repeating: 0, count: 256))).prefix(3) == [0x59, 0x01, 0x00])
        #expect(CBOREncoder.encode(.array(Array(repeating: nil, count: 65536))).prefix(5) == [0x9a, 0, 1, 0, 0])
    }

    /// Every half-precision bit pattern decodes and re-encodes to itself (NaNs to the one NaN).
    @Test func everyHalfFloatRoundTrips() throws {
        for bits in UInt16.min...UInt16.max {
            let encoding: [UInt8] = [0xf9, UInt8(bits >> 8), UInt8(bits & 0xff)]
            let value = try decode(encoding)
            guard case .float(let d) = value else { Issue.record("\(bits)"); continue }
            let isNaN = bits & 0x7c00 == 0x7c00 && bits & 0x3ff != 0
            #expect(d.isNaN == isNaN)
            #expect(CBOREncoder.encode(value) == (isNaN ? [0xf9, 0x7e, 0x00] : encoding), "half \(bits)")
        }
    }

    #if !(os(macOS) && arch(x86_64))
    /// The hand-written half conversion agrees with the standard library's `Float16`.
    @Test func halfConversionAgreesWithFloat16() {
        for bits in UInt16.min...UInt16.max {
            let half = Float16(bitPattern: bits)
            let mine = HalfFloat.double(bits)
            #expect(half.isNaN ? mine.isNaN : Double(half).bitPattern == mine.bitPattern, "half \(bits)")
        }
        var rng = SeededGenerator(seed: 16)
        for i in 0..<200_000 {
            // Random singles, and singles that are halves, so both answers are common.
            let f = i % 2 == 0 ? Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)) : Float(Float16(bitPattern: UInt16.random(in: 0...UInt16.max, using: &rng)))
            guard !f.isNaN else { continue }
            let exact = Float(Float16(f)) == f || (f == 0 && Float16(f) == 0)
            let bits = HalfFloat.exactBits(f)
            #expect((bits != nil) == exact, "float \(f)")
            if let bits { #expect(bits == Float16(f).bitPattern, "float \(f)") }
        }
    }
    #endif

    @Test func floatsTakeTheShortestExactWidth() throws {
        var rng = SeededGenerator(seed: 32)
        for _ in 0..<100_000 {
            let d = Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))
            let single = Double(Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)))
            for value in [d, single] {
                let encoding = CBOREncoder.encode(.float(value))
                let expected = value.isNaN ? 3 : Double(Float(value)).bitPattern != value.bitPattern ? 9 : HalfFloat.exactBits(Float(value)) != nil ? 3 : 5
                #expect(encoding.count == expected)
                #expect(try decode(encoding) == .float(value))
            }
        }
    }

    @Test func floatEqualityFollowsEncoding() {
        #expect(CBORValue.float(0.0) != .float(-0.0))
        #expect(CBORValue.float(.nan) == .float(-.nan))
        #expect(CBORValue.float(.nan) == .float(Double(bitPattern: 0x7ff0_0000_0000_0001)))
        #expect(CBORValue.float(.nan).hashValue == CBORValue.float(Double(bitPattern: 0xfff8_0000_0000_0001)).hashValue)
        #expect(CBORValue.float(1) != .unsigned(1))
        #expect(CBORValue.negative(0) == -1)
    }
}
