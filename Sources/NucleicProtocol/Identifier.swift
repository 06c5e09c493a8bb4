/// A typed identifier: UUIDv7 text (time-sortable, lowercase), or whatever a backend gave us.
///
/// The phantom `Tag` keeps a session id from being passed where an approval id is meant.
public struct Identifier<Tag>: Sendable, Hashable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(_ rawValue: String) { self.rawValue = rawValue.lowercased() }
    public init(stringLiteral value: String) { self.init(value) }

    /// A new UUIDv7: 48 bits of Unix milliseconds, then random bits (RFC 9562 §5.7).
    public static func make(now: Timestamp = .now()) -> Self {
        Self(UUIDv7.make(milliseconds: now.millisecondsSince1970))
    }

    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

public enum SessionTag {}
public enum ApprovalTag {}
public enum ProjectTag {}
public enum DeviceTag {}
public enum RuleTag {}

public typealias SessionID = Identifier<SessionTag>
public typealias ApprovalID = Identifier<ApprovalTag>
public typealias ProjectID = Identifier<ProjectTag>
public typealias DeviceID = Identifier<DeviceTag>
public typealias RuleID = Identifier<RuleTag>

/// UUIDv7 text generation.
public enum UUIDv7 {
    public static func make(milliseconds: Int64) -> String {
        // The 74 random bits from two draws of the system generator (each a getrandom call;
        // drawing byte by byte made it ten calls an id).
        var rng = SystemRandomNumberGenerator()
        let random = (rng.next(), rng.next())
        var bytes = [UInt8](repeating: 0, count: 16)
        let ms = UInt64(max(0, milliseconds))
        for i in 0..<6 { bytes[i] = UInt8(truncatingIfNeeded: ms >> (40 - 8 * UInt64(i))) }
        for i in 6..<16 {
            let word = i < 14 ? random.0 : random.1
            bytes[i] = UInt8(truncatingIfNeeded: word >> (8 * UInt64((i - 6) % 8)))
        }
        bytes[6] = 0x70 | (bytes[6] & 0x0F)  // version 7
        bytes[8] = 0x80 | (bytes[8] & 0x3F)  // variant 10
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, b) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(b >> 4)])
            out.append(hex[Int(b & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
