public import NucleicProtocol

/// A value SQLite stores: the five storage classes.
public enum SQLValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// A Swift value that binds as an SQL parameter.
public protocol SQLValueConvertible: Sendable {
    var sqlValue: SQLValue { get }
}

/// A Swift value read from a result column. `Optional` reads NULL as nil; every other type
/// refuses NULL with an error naming the column.
public protocol SQLColumnDecodable {
    static func decode(from row: Row, at column: Int32) throws(StoreError) -> Self
}

extension SQLValue: SQLValueConvertible {
    public var sqlValue: SQLValue { self }
}

extension Int64: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .integer(self) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Int64 {
        try row.requireNotNull(column, "an integer")
        return row.int64(at: column)
    }
}

extension Int: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Int {
        Int(try Int64.decode(from: row, at: column))
    }
}

extension Int32: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Int32 {
        let v = try Int64.decode(from: row, at: column)
        guard let narrow = Int32(exactly: v) else { throw row.mismatch(column, "a 32-bit integer") }
        return narrow
    }
}

extension Bool: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Bool {
        try Int64.decode(from: row, at: column) != 0
    }
}

extension Double: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .real(self) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Double {
        try row.requireNotNull(column, "a number")
        return row.double(at: column)
    }
}

extension String: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .text(self) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> String {
        try row.requireNotNull(column, "text")
        return row.text(at: column)
    }
}

extension Array: SQLValueConvertible, SQLColumnDecodable where Element == UInt8 {
    public var sqlValue: SQLValue { .blob(self) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> [UInt8] {
        try row.requireNotNull(column, "a blob")
        return row.blob(at: column)
    }
}

extension Optional: SQLValueConvertible where Wrapped: SQLValueConvertible {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

extension Optional: SQLColumnDecodable where Wrapped: SQLColumnDecodable {
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Wrapped? {
        if row.isNull(at: column) { return nil }
        return try Wrapped.decode(from: row, at: column)
    }
}

// Domain types: identifiers as their text, timestamps as Unix milliseconds, enums as raw values,
// JSON as compact text.

extension Identifier: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .text(rawValue) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Identifier {
        Identifier(try String.decode(from: row, at: column))
    }
}

extension Timestamp: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .integer(millisecondsSince1970) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Timestamp {
        Timestamp(millisecondsSince1970: try Int64.decode(from: row, at: column))
    }
}

extension JSONValue: SQLValueConvertible, SQLColumnDecodable {
    public var sqlValue: SQLValue { .text(JSONWriter.string(self)) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> JSONValue {
        let text = try String.decode(from: row, at: column)
        do { return try JSONParser.parse(text) } catch { throw row.mismatch(column, "JSON (\(error))") }
    }
}

/// String-backed enums (statuses, risks, scopes) bind as their raw value and refuse unknown text.
protocol SQLRawEnum: RawRepresentable, SQLValueConvertible, SQLColumnDecodable where RawValue == String {}

extension SQLRawEnum {
    public var sqlValue: SQLValue { .text(rawValue) }
    public static func decode(from row: Row, at column: Int32) throws(StoreError) -> Self {
        let raw = try String.decode(from: row, at: column)
        guard let value = Self(rawValue: raw) else { throw row.mismatch(column, "a known \(Self.self), not \"\(raw)\"") }
        return value
    }
}

extension SessionStatus: SQLRawEnum {}
extension Risk: SQLRawEnum {}
extension Scope: SQLRawEnum {}

/// Values stored as their JSON text (`Decision`, `ApprovalRequest`).
extension JSONRepresentable {
    var sqlJSON: SQLValue { .text(JSONWriter.string(json)) }

    static func decodeJSON(from row: Row, at column: Int32) throws(StoreError) -> Self {
        let value = try JSONValue.decode(from: row, at: column)
        do { return try Self(json: value) } catch { throw row.mismatch(column, "a \(Self.self) (\(error.message))") }
    }
}
