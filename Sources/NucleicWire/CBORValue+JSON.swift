public import NucleicProtocol

/// JSON ⇄ CBOR, for the JSON values messages carry (tool inputs, decisions, event payloads).
///
/// JSON → CBOR is total and exact: null, booleans, strings and arrays map to their namesakes,
/// integers (`JSONValue.int`) to CBOR integers, doubles to CBOR floats (so `3.0` stays a float
/// and `3` an integer), objects to maps with text keys in the same order.
///
/// CBOR → JSON is the inverse on that image, and otherwise refuses what JSON cannot say rather
/// than inventing a form the agent would then receive as real data:
/// - byte strings, tags (bignums included), and map keys that are not text → `.notJSON`;
/// - integers outside the Int64 range → `.notJSON` (JSONValue keeps integers as Int64);
/// - undefined → null (the one lossy mapping: JSON has a single "no value");
/// - floats of any wire width → `.double`, NaN and infinities included (JSONWriter writes
///   them as null).
/// Duplicate keys cannot occur: the decoder rejects them.
extension CBORValue {
    /// The CBOR form of a JSON value.
    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .int(let i): self.init(i)
        case .double(let d): self = .float(d)
        case .string(let s): self = .text(s)
        case .array(let a): self = .array(a.map(CBORValue.init))
        case .object(let o):
            var map = CBORMap()
            map.reserveCapacity(o.count)
            for entry in o.entries { map.append(.text(entry.key), CBORValue(entry.value)) }
            self = .map(map)
        }
    }
}

extension JSONValue {
    /// The JSON form of a CBOR value; throws `.notJSON` naming the path (`$.input.files[2]`)
    /// of the first part that has none.
    public init(cbor: CBORValue) throws(CBORError) {
        var path = "$"
        self = try JSONValue.convert(cbor, path: &path)
    }

    private static func convert(_ value: CBORValue, path: inout String) throws(CBORError) -> JSONValue {
        switch value {
        case .null, .undefined: return .null
        case .bool(let b): return .bool(b)
        case .unsigned, .negative:
            guard let i = value.int64Value else { throw notJSON(path, "the integer \(value) is outside the Int64 range") }
            return .int(i)
        case .float(let d): return .double(d)
        case .text(let s): return .string(s)
        case .bytes(let b): throw notJSON(path, "a byte string (\(b.count) bytes) has no JSON form")
        case .tagged(let tag, _): throw notJSON(path, "a value with tag \(tag) has no JSON form")
        case .array(let elements):
            var out: [JSONValue] = []
            out.reserveCapacity(elements.count)
            let base = path
            for (i, element) in elements.enumerated() {
                path = base + "[\(i)]"
                out.append(try convert(element, path: &path))
            }
            path = base
            return .array(out)
        case .map(let map):
            var object = JSONObject()
            let base = path
            for entry in map.entries {
                guard case .text(let key) = entry.key else {
                    throw notJSON(base, "a map key \(entry.key.shortDescription) is not a text string")
                }
                path = base + "." + key
                object.append(key, try convert(entry.value, path: &path))
            }
            path = base
            return .object(object)
        }
    }

    private static func notJSON(_ path: String, _ what: String) -> CBORError {
        CBORError(.notJSON, "\(path): \(what)", offset: nil)
    }
}
