public import NucleicProtocol
import NucleicWire

/// Application messages to and from CBOR bytes (docs/PROTOCOL.md), with the remote contract's
/// fields that `ClientMsg`/`HostMsg` do not carry yet: `hello.label` (pairing) and
/// `welcome.deviceID`.
public enum RemoteWire {
    /// What one received message is.
    public enum Incoming: Sendable, Hashable {
        /// A host message; `deviceID` is set on a `welcome` that carried one.
        case message(HostMsg, deviceID: DeviceID?)
        /// A well-formed map of a `type` this client does not know: ignored (forward compatible).
        case unknown(type: String)
    }

    /// The CBOR bytes of a client message; `label` is added to a `hello` (the device's label,
    /// sent when pairing).
    public static func encode(_ message: ClientMsg, label: String? = nil) -> [UInt8] {
        var json = message.json
        if case .hello = message.body, let label, case .object(var o) = json {
            o.append("label", .string(label))
            json = .object(o)
        }
        return CBOREncoder.encode(CBORValue(json))
    }

    /// The CBOR bytes of a host message (for test hosts); `deviceID` is added to a `welcome`.
    public static func encode(_ message: HostMsg, deviceID: DeviceID? = nil) -> [UInt8] {
        var json = message.json
        if case .welcome = message.body, let deviceID, case .object(var o) = json {
            o.append("deviceID", .string(deviceID.rawValue))
            json = .object(o)
        }
        return CBOREncoder.encode(CBORValue(json))
    }

    /// Decodes a host message. Throws `badMessage` for bytes that are not a CBOR map with a
    /// string `type`, or a known type with missing or mistyped fields.
    public static func decodeHost(_ bytes: [UInt8]) throws(RemoteError) -> Incoming {
        let json = try self.json(bytes)
        guard let type = json["type"]?.stringValue else { throw RemoteError(.badMessage, "a host message without a \"type\"") }
        guard knownHostTypes.contains(type) else { return .unknown(type: type) }
        do {
            let message = try HostMsg(json: json)
            let deviceID = json["deviceID"]?.stringValue.map { DeviceID($0) }
            return .message(message, deviceID: deviceID)
        } catch {
            throw RemoteError(.badMessage, "a \(type) message: \(error.message)")
        }
    }

    /// Decodes a client message (for test hosts), with the `label` of a `hello`.
    public static func decodeClient(_ bytes: [UInt8]) throws(RemoteError) -> (ClientMsg, label: String?) {
        let json = try self.json(bytes)
        do {
            return (try ClientMsg(json: json), json["label"]?.stringValue)
        } catch {
            throw RemoteError(.badMessage, error.message)
        }
    }

    static func json(_ bytes: [UInt8]) throws(RemoteError) -> JSONValue {
        do {
            return try JSONValue(cbor: CBORDecoder.decode(bytes))
        } catch {
            throw RemoteError(.badMessage, "not a CBOR message: \(error)")
        }
    }

    static let knownHostTypes: Set<String> = [
        "welcome", "sessionList", "snapshot", "events", "approvalRequested", "approvalResolved", "sessionUpdated", "error",
        "pong", "ok", "sessionCreated", "projectList", "approvalList", "diff", "fixture", "integrated", "integrationRefused",
        "overlap",
    ]
}
