public import NucleicProtocol
import NucleicWire

/// Client and host messages to and from the bytes of one frame: a CBOR map with a `"type"` key
/// (docs/PROTOCOL.md, docs/CBOR.md).
public enum WireMessages {
    public static func encode(_ message: HostMsg) -> [UInt8] { CBOREncoder.encode(CBORValue(message.json)) }
    public static func encode(_ message: ClientMsg) -> [UInt8] { CBOREncoder.encode(CBORValue(message.json)) }

    public static func decodeClient(_ bytes: [UInt8]) throws(ShapeError) -> ClientMsg {
        try ClientMsg(json: json(bytes))
    }

    public static func decodeHost(_ bytes: [UInt8]) throws(ShapeError) -> HostMsg {
        try HostMsg(json: json(bytes))
    }

    /// The integer `requestID` of a client frame, read without decoding the rest, so that the
    /// error answering a frame that is not a valid message (an unknown type, a missing or mistyped
    /// field) still carries it. Nil when the frame is not a CBOR map or has no integer `requestID`.
    public static func requestID(in bytes: [UInt8]) -> Int64? {
        guard case .int(let id)? = (try? json(bytes))?["requestID"] else { return nil }
        return id
    }

    static func json(_ bytes: [UInt8]) throws(ShapeError) -> JSONValue {
        do {
            return try JSONValue(cbor: CBORDecoder.decode(bytes))
        } catch {
            throw ShapeError("not a CBOR message: \(error)")
        }
    }
}
