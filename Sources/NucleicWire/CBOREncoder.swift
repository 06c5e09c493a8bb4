/// Writes `CBORValue`s as deterministic CBOR (RFC 8949 §4.2.1, except for map key order).
///
/// - every length is definite, and every argument (integer, length, tag number) takes the
///   shortest form;
/// - floats take the shortest of half, single and double that holds the value exactly
///   (preferred serialization, §4.1), and every NaN is written as the canonical half `0xf97e00`
///   (NaN payloads are not kept);
/// - map entries are written in the order they are stored, not sorted: messages keep the field
///   order their builder chose, and a value that came from the decoder re-encodes to the same
///   bytes when those bytes were themselves deterministic.
///
/// Encoding cannot fail. Nothing here limits size: the frame layer refuses messages over 16 MiB.
public enum CBOREncoder {
    /// The encoding of `value`.
    public static func encode(_ value: CBORValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        encode(value, into: &out)
        return out
    }

    /// Appends the encoding of `value` to `out`.
    public static func encode(_ value: CBORValue, into out: inout [UInt8]) {
        switch value {
        case .unsigned(let n): writeHead(0, n, into: &out)
        case .negative(let n): writeHead(1, n, into: &out)
        case .bytes(let b):
            writeHead(2, UInt64(b.count), into: &out)
            out.append(contentsOf: b)
        case .text(let s):
            var s = s
            s.withUTF8 { utf8 in
                writeHead(3, UInt64(utf8.count), into: &out)
                out.append(contentsOf: utf8)
            }
        case .array(let a):
            writeHead(4, UInt64(a.count), into: &out)
            for element in a { encode(element, into: &out) }
        case .map(let m):
            writeHead(5, UInt64(m.count), into: &out)
            for entry in m.entries {
                encode(entry.key, into: &out)
                encode(entry.value, into: &out)
            }
        case .tagged(let tag, let content):
            writeHead(6, tag, into: &out)
            encode(content, into: &out)
        case .bool(let b): out.append(b ? 0xf5 : 0xf4)
        case .null: out.append(0xf6)
        case .undefined: out.append(0xf7)
        case .float(let d): writeFloat(d, into: &out)
        }
    }

    /// A major type's head with the shortest argument: in the initial byte below 24, else in
    /// 1, 2, 4 or 8 big-endian bytes after additional information 24…27.
    static func writeHead(_ major: UInt8, _ argument: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch argument {
        case 0..<24:
            out.append(m | UInt8(argument))
        case 24...0xff:
            out.append(m | 24)
            out.append(UInt8(argument))
        case 0x100...0xffff:
            out.append(m | 25)
            appendBigEndian(argument, bytes: 2, into: &out)
        case 0x1_0000...0xffff_ffff:
            out.append(m | 26)
            appendBigEndian(argument, bytes: 4, into: &out)
        default:
            out.append(m | 27)
            appendBigEndian(argument, bytes: 8, into: &out)
        }
    }

    static func writeFloat(_ d: Double, into out: inout [UInt8]) {
        if d.isNaN {
            out.append(contentsOf: [0xf9, 0x7e, 0x00])
            return
        }
        let single = Float(d)
        guard Double(single).bitPattern == d.bitPattern else {
            out.append(0xfb)
            appendBigEndian(d.bitPattern, bytes: 8, into: &out)
            return
        }
        if let half = HalfFloat.exactBits(single) {
            out.append(0xf9)
            appendBigEndian(UInt64(half), bytes: 2, into: &out)
        } else {
            out.append(0xfa)
            appendBigEndian(UInt64(single.bitPattern), bytes: 4, into: &out)
        }
    }

    private static func appendBigEndian(_ value: UInt64, bytes: Int, into out: inout [UInt8]) {
        var shift = (bytes - 1) * 8
        while shift >= 0 {
            out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            shift -= 8
        }
    }
}

/// IEEE 754 binary16 by hand: `Float16` is missing on some of Swift's platforms (macOS on
/// Intel), and only two conversions are needed.
enum HalfFloat {
    /// The value of the half-precision bit pattern `bits`, exactly (NaN payloads shifted along).
    static func double(_ bits: UInt16) -> Double {
        let sign: UInt64 = UInt64(bits >> 15) << 63
        let exponent = Int((bits >> 10) & 0x1f)
        let mantissa = UInt64(bits & 0x3ff)
        switch exponent {
        case 0:
            // Zero or subnormal: mantissa × 2^−24, exact in a double.
            let magnitude = Double(mantissa) * 0x1p-24
            return sign == 0 ? magnitude : -magnitude
        case 0x1f:
            // Infinity (mantissa 0) or NaN, payload kept in the top mantissa bits.
            return Double(bitPattern: sign | 0x7ff0_0000_0000_0000 | mantissa << 42)
        default:
            return Double(bitPattern: sign | UInt64(exponent - 15 + 1023) << 52 | mantissa << 42)
        }
    }

    /// The half-precision bits of `f` when a half holds it exactly; nil otherwise (and for NaN,
    /// which the encoder writes itself).
    static func exactBits(_ f: Float) -> UInt16? {
        let bits = f.bitPattern
        let sign = UInt16(bits >> 31) << 15
        let exponentBits = Int((bits >> 23) & 0xff)
        let mantissa = bits & 0x7f_ffff
        if exponentBits == 0xff { return mantissa == 0 ? sign | 0x7c00 : nil }
        if exponentBits == 0 { return mantissa == 0 ? sign : nil }  // float subnormals are below every half
        let exponent = exponentBits - 127
        switch exponent {
        case -14...15:
            // Normal half: the 13 low mantissa bits must be zero.
            guard mantissa & 0x1fff == 0 else { return nil }
            return sign | UInt16(exponent + 15) << 10 | UInt16(mantissa >> 13)
        case -24 ... -15:
            // Subnormal half: value = m × 2^−24 with m < 1024, so the significand shifts right
            // by −(exponent + 1) bits, which must all be zero.
            let significand = mantissa | 0x80_0000
            let shift = UInt32(-(exponent + 1))
            guard significand & ((1 << shift) - 1) == 0 else { return nil }
            return sign | UInt16(significand >> shift)
        default:
            return nil
        }
    }
}
