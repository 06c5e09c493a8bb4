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

    static func json(_ bytes: [UInt8]) throws(ShapeError) -> JSONValue {
        do {
            return try JSONValue(cbor: CBORDecoder.decode(bytes))
        } catch {
            throw ShapeError("not a CBOR message: \(error)")
        }
    }
}
