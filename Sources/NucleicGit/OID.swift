import CGit2

/// A git object id (SHA-1, 20 bytes), hashable and printable as 40 lowercase hex digits.
///
/// libgit2's `git_oid` imports as a 20-element tuple, which is neither `Hashable` nor
/// `Equatable`; this wraps it as bytes.
public struct OID: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// The 20 raw bytes.
    public let bytes: [UInt8]

    /// Wraps libgit2's id.
    init(_ oid: git_oid) {
        var copy = oid
        bytes = withUnsafeBytes(of: &copy.id) { Array($0) }
    }

    /// Parses 40 hex digits (either case); nil for anything else.
    public init?(hex: String) {
        let utf8 = Array(hex.utf8)
        guard utf8.count == 40 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(20)
        var index = 0
        while index < 40 {
            guard let high = OID.nibble(utf8[index]), let low = OID.nibble(utf8[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        bytes = result
    }

    /// 40 lowercase hex digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(40)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The first `length` hex digits (git's short form).
    public func abbreviated(_ length: Int = 7) -> String { String(hex.prefix(length)) }

    public var description: String { hex }

    public static func < (lhs: OID, rhs: OID) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    /// libgit2's form, for passing to C.
    var raw: git_oid {
        var oid = git_oid()
        withUnsafeMutableBytes(of: &oid.id) { destination in
            for (index, byte) in bytes.enumerated() where index < destination.count { destination[index] = byte }
        }
        return oid
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
