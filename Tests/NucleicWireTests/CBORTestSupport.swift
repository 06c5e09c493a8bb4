import NucleicProtocol
@testable import NucleicWire
import NucleicTestSupport


func bytes(hex: String) -> [UInt8] {
    var out: [UInt8] = []
    var digits = hex.utf8.makeIterator()
    while let high = digits.next(), let low = digits.next() {
        out.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
    }
    return out
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

/// Random CBOR values covering every kind and every argument width.
///
/// `interop` keeps to what cbor2 gives back unchanged: tags it does not interpret, and map keys
/// that stay distinct as Python dict keys (text, integers, byte strings; no booleans or floats,
/// since `1 == 1.0 == True` there).
struct ValueGenerator {
    var interop = false
    var maxDepth = 4

    /// Tag numbers cbor2 6.3 turns into Python objects (dates, bignums, decimals, sets, …).
    static let cbor2Tags: Set<UInt64> = [0, 1, 2, 3, 4, 5, 25, 28, 29, 30, 35, 36, 37, 52, 54, 100, 256, 258, 260, 261, 1004, 55799]

    static let boundaries: [UInt64] = [
        0, 1, 23, 24, 25, 255, 256, 1000, 65535, 65536, 0xffff_ffff, 0x1_0000_0000, UInt64(Int64.max), UInt64(Int64.max) + 1, .max,
    ]

    func value(depth: Int = 0, using rng: inout some RandomNumberGenerator) -> CBORValue {
        let containers = depth < maxDepth
        switch Int.random(in: 0..<(containers ? 14 : 10), using: &rng) {
        case 0: return .unsigned(integer(using: &rng))
        case 1: return .negative(integer(using: &rng))
        case 2: return .bytes(randomBytes(using: &rng))
        case 3, 4: return .text(text(using: &rng))
        case 5: return .float(float(using: &rng))
        case 6: return .bool(Bool.random(using: &rng))
        case 7: return .null
        case 8: return .undefined
        case 9: return .unsigned(UInt64.random(in: 0..<100, using: &rng))
        case 10, 11:
            let count = containerCount(using: &rng)
            return .array((0..<count).map { _ in value(depth: depth + 1, using: &rng) })
        case 12: return .map(map(depth: depth, using: &rng))
        default: return .tagged(tag(using: &rng), value(depth: depth + 1, using: &rng))
        }
    }

    func map(depth: Int, using rng: inout some RandomNumberGenerator) -> CBORMap {
        var map = CBORMap()
        var seen = Set<CBORValue>()
        for _ in 0..<containerCount(using: &rng) {
            let key = self.key(depth: depth, using: &rng)
            guard seen.insert(key).inserted else { continue }
            map.append(key, value(depth: depth + 1, using: &rng))
        }
        return map
    }

    func key(depth: Int, using rng: inout some RandomNumberGenerator) -> CBORValue {
        if interop {
            switch Int.random(in: 0..<6, using: &rng) {
            case 0: return .unsigned(integer(using: &rng))
            case 1: return .negative(integer(using: &rng))
            case 2: return .bytes(randomBytes(using: &rng))
            default: return .text(text(using: &rng))
            }
        }
        return Int.random(in: 0..<3, using: &rng) == 0 ? value(depth: depth + 1, using: &rng) : .text(text(using: &rng))
    }

    func containerCount(using rng: inout some RandomNumberGenerator) -> Int {
        switch Int.random(in: 0..<20, using: &rng) {
        case 0: return 0
        case 1: return Int.random(in: 20...30, using: &rng)  // crosses the one-byte length at 24
        default: return Int.random(in: 1...5, using: &rng)
        }
    }

    func integer(using rng: inout some RandomNumberGenerator) -> UInt64 {
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: return Self.boundaries.randomElement(using: &rng)!
        case 1: return UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0..<64, using: &rng)
        default: return UInt64.random(in: 0..<30, using: &rng)
        }
    }

    func tag(using rng: inout some RandomNumberGenerator) -> UInt64 {
        while true {
            let tag = integer(using: &rng)
            if !interop || !Self.cbor2Tags.contains(tag) { return tag }
        }
    }

    func randomBytes(using rng: inout some RandomNumberGenerator) -> [UInt8] {
        let count = Int.random(in: 0..<10, using: &rng) == 0 ? Int.random(in: 20...300, using: &rng) : Int.random(in: 0...8, using: &rng)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    static let scalarRanges: [ClosedRange<UInt32>] = [
        0x20...0x7e, 0x20...0x7e, 0x00...0x1f, 0x80...0x7ff, 0x800...0xd7ff, 0xe000...0xffff, 0x1_0000...0x10_ffff,
    ]

    func text(using rng: inout some RandomNumberGenerator) -> String {
        let count = Int.random(in: 0..<10, using: &rng) == 0 ? Int.random(in: 20...300, using: &rng) : Int.random(in: 0...8, using: &rng)
        var s = String.UnicodeScalarView()
        for _ in 0..<count {
            let range = Self.scalarRanges.randomElement(using: &rng)!
            s.append(Unicode.Scalar(UInt32.random(in: range, using: &rng))!)
        }
        return String(s)
    }

    static let specialFloats: [Double] = [
        0, -0.0, 1, -1.5, 1.1, 65504, 65505, 65520, 0x1p-24, 0x1p-25, 0x1p-14, 0x1.ffcp-15, .infinity, -.infinity, .nan,
        .greatestFiniteMagnitude, .leastNonzeroMagnitude, Double(Float.greatestFiniteMagnitude), Double(Float.leastNonzeroMagnitude),
        Double(Float.leastNormalMagnitude), 100000, 1e300, 3.4028234663852886e+38,
    ]

    func float(using rng: inout some RandomNumberGenerator) -> Double {
        switch Int.random(in: 0..<5, using: &rng) {
        case 0: return Self.specialFloats.randomElement(using: &rng)!
        case 1: return HalfFloat.double(UInt16.random(in: 0...UInt16.max, using: &rng))
        case 2: return Double(Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng)))
        case 3: return Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))
        default: return Double(Int.random(in: -1000...1000, using: &rng)) / 8
        }
    }
}

/// The value with every map's entries in cbor2's canonical order: shorter encoded keys first,
/// then bytewise (RFC 7049 §3.9, which `cbor2.dumps(canonical=True)` follows).
func cbor2Canonical(_ value: CBORValue) -> CBORValue {
    switch value {
    case .array(let a): return .array(a.map(cbor2Canonical))
    case .tagged(let tag, let v): return .tagged(tag, cbor2Canonical(v))
    case .map(let m):
        let entries = m.entries.map { entry in
            (key: CBOREncoder.encode(cbor2Canonical(entry.key)), entry: CBORMap.Entry(cbor2Canonical(entry.key), cbor2Canonical(entry.value)))
        }
        let sorted = entries.sorted { a, b in
            a.key.count != b.key.count ? a.key.count < b.key.count : a.key.lexicographicallyPrecedes(b.key)
        }
        return .map(CBORMap(sorted.map(\.entry)))
    default: return value
    }
}

/// The description format of `Tests/Peers/cbor_peer.py`: every CBOR value as JSON, no JSON numbers.
enum Description {
    static func of(_ value: CBORValue) -> JSONValue {
        switch value {
        case .unsigned, .negative: return ["int", .string(String(value.integerValue!))]
        case .bytes(let b): return ["bytes", .string(hexString(b))]
        case .text(let s): return ["text", .string(s)]
        case .array(let a): return ["array", .array(a.map(of))]
        case .map(let m): return ["map", .array(m.entries.map { [of($0.key), of($0.value)] })]
        case .tagged(let tag, let v): return ["tag", .string(String(tag)), of(v)]
        case .bool(let b): return ["bool", .bool(b)]
        case .null: return ["null"]
        case .undefined: return ["undefined"]
        case .float(let d): return ["float", .string(hexString(withUnsafeBytes(of: d.bitPattern.bigEndian) { Array($0) }))]
        }
    }

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    static func value(_ description: JSONValue) throws -> CBORValue {
        guard let parts = description.arrayValue, let kind = parts.first?.stringValue else { throw Invalid(description: "\(description)") }
        let argument = parts.count > 1 ? parts[1] : .null
        switch kind {
        case "int":
            guard let text = argument.stringValue, let n = Int128(text), let v = CBORValue(exactly: n) else { throw Invalid(description: "\(description)") }
            return v
        case "bytes": return .bytes(bytes(hex: argument.stringValue ?? ""))
        case "text": return .text(argument.stringValue ?? "")
        case "array": return .array(try (argument.arrayValue ?? []).map(value))
        case "map":
            var map = CBORMap()
            for pair in argument.arrayValue ?? [] { map.append(try value(pair[0] ?? .null), try value(pair[1] ?? .null)) }
            return .map(map)
        case "tag":
            guard let text = argument.stringValue, let tag = UInt64(text), parts.count == 3 else { throw Invalid(description: "\(description)") }
            return .tagged(tag, try value(parts[2]))
        case "bool": return .bool(argument.boolValue ?? false)
        case "null": return .null
        case "undefined": return .undefined
        case "float": return .float(Double(bitPattern: UInt64(argument.stringValue ?? "", radix: 16) ?? 0))
        default: throw Invalid(description: "unknown kind in \(description)")
        }
    }
}

/// Decoding with the default limits, for brevity.
func decode(_ bytes: [UInt8]) throws(CBORError) -> CBORValue { try CBORDecoder.decode(bytes) }

/// The error decoding `bytes` throws, or nil if it decodes.
func decodeError(_ bytes: [UInt8], limits: CBORDecoder.Limits = .default) -> CBORError? {
    do {
        _ = try CBORDecoder.decode(bytes, limits: limits)
        return nil
    } catch {
        return error
    }
}
