/// A value with one exact JSON shape (DESIGN.md §6), written and read by hand so the shape is
/// the documented one, not whatever a synthesized `Codable` would produce.
public protocol JSONRepresentable: Sendable {
    var json: JSONValue { get }
    init(json: JSONValue) throws(ShapeError)
}

/// A JSON value that does not have the shape a Nucleic type needs.
public struct ShapeError: Error, Sendable, Hashable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Typed reads of an object's fields with errors that name the field.
public struct Fields: Sendable {
    public let object: JSONObject
    let context: String

    public init(_ value: JSONValue, _ context: String) throws(ShapeError) {
        guard case .object(let object) = value else { throw ShapeError("\(context): expected an object") }
        self.object = object
        self.context = context
    }

    public subscript(key: String) -> JSONValue? {
        if let value = object[key], !value.isNull { return value }
        return nil
    }

    public func value(_ key: String) throws(ShapeError) -> JSONValue {
        guard let value = self[key] else { throw ShapeError("\(context): missing \"\(key)\"") }
        return value
    }

    public func string(_ key: String) throws(ShapeError) -> String {
        try typed(key, "a string", value(key).stringValue)
    }

    public func optionalString(_ key: String) throws(ShapeError) -> String? {
        guard let v = self[key] else { return nil }
        return try typed(key, "a string", v.stringValue)
    }

    public func bool(_ key: String, default fallback: Bool? = nil) throws(ShapeError) -> Bool {
        guard let v = self[key] else {
            if let fallback { return fallback }
            throw ShapeError("\(context): missing \"\(key)\"")
        }
        return try typed(key, "a boolean", v.boolValue)
    }

    public func int(_ key: String) throws(ShapeError) -> Int64 {
        try typed(key, "an integer", value(key).intValue)
    }

    public func optionalInt(_ key: String) throws(ShapeError) -> Int64? {
        guard let v = self[key] else { return nil }
        return try typed(key, "an integer", v.intValue)
    }

    public func optionalDouble(_ key: String) throws(ShapeError) -> Double? {
        guard let v = self[key] else { return nil }
        return try typed(key, "a number", v.doubleValue)
    }

    public func decode<T: JSONRepresentable>(_ key: String, as type: T.Type = T.self) throws(ShapeError) -> T {
        try T(json: value(key))
    }

    public func optional<T: JSONRepresentable>(_ key: String, as type: T.Type = T.self) throws(ShapeError) -> T? {
        guard let v = self[key] else { return nil }
        return try T(json: v)
    }

    public func enumValue<T: RawRepresentable>(_ key: String, as type: T.Type = T.self) throws(ShapeError) -> T
    where T.RawValue == String {
        let raw = try string(key)
        guard let value = T(rawValue: raw) else { throw ShapeError("\(context): unknown \(key) \"\(raw)\"") }
        return value
    }

    /// `value`, the field read as the type it must have, or an error naming the field and that
    /// type (`expected`, e.g. "a string").
    private func typed<T>(_ key: String, _ expected: String, _ value: T?) throws(ShapeError) -> T {
        guard let value else { throw ShapeError("\(context): \"\(key)\" must be \(expected)") }
        return value
    }
}
