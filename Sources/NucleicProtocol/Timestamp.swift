#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time with millisecond precision, printed as RFC 3339 UTC (`2026-11-30T07:26:09.145Z`).
///
/// Transcripts carry one per event; formatting it by hand keeps Foundation off the ingest path.
public struct Timestamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(millisecondsSince1970: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }

    public static func < (a: Timestamp, b: Timestamp) -> Bool { a.millisecondsSince1970 < b.millisecondsSince1970 }

    public var description: String {
        let ms = millisecondsSince1970
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let msOfDay = ms - days * 86_400_000
        let (y, m, d) = Self.civil(fromDays: days)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(msOfDay / 3_600_000, 2)):\(pad(msOfDay / 60_000 % 60, 2)):"
            + "\(pad(msOfDay / 1000 % 60, 2)).\(pad(msOfDay % 1000, 3))Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` (what `description` prints; offsets other than Z are refused).
    public init?(_ text: String) {
        let u = Array(text.utf8)
        guard u.count >= 20, u[4] == 0x2D, u[7] == 0x2D, u[10] == 0x54, u[13] == 0x3A, u[16] == 0x3A,
            u.last == UInt8(ascii: "Z")
        else { return nil }
        func num(_ r: Range<Int>) -> Int64? {
            var v: Int64 = 0
            for i in r { guard u[i] >= 0x30, u[i] <= 0x39 else { return nil }; v = v * 10 + Int64(u[i] - 0x30) }
            return v
        }
        guard let y = num(0..<4), let mo = num(5..<7), let d = num(8..<10), let h = num(11..<13),
            let mi = num(14..<16), let s = num(17..<19), (1...12).contains(mo), (1...31).contains(d), h < 24, mi < 60, s < 61
        else { return nil }
        var millis: Int64 = 0
        if u.count > 20 {
            guard u[19] == UInt8(ascii: "."), u.count >= 22 else { return nil }
            let digits = Array(u[20..<(u.count - 1)])
            guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            for i in 0..<3 { millis = millis * 10 + (i < digits.count ? Int64(digits[i] - 0x30) : 0) }
        } else if u.count != 20 {
            return nil
        }
        let days = Self.days(fromCivil: y, mo, d)
        millisecondsSince1970 = ((days * 24 + h) * 60 + mi) * 60_000 + s * 1000 + millis
    }

    // Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
