public import NucleicProtocol
import NucleicWire

/// Application messages to and from CBOR bytes (docs/PROTOCOL.md). `hello` and `welcome` are read
/// field by field (`welcome` into `HostInfo`), so the kit does not depend on how the Swift cases
/// of the handshake messages grow; a `label` given here is added to a `hello` that has none.
public enum RemoteWire {
    /// What one received message is.
    public enum Incoming: Sendable, Hashable {
        /// `welcome`, read field by field (its Swift case grows with the protocol).
        case welcome(HostInfo, protocolVersion: Int64)
        /// Any other host message.
        case message(HostMsg)
        /// A well-formed map of a `type` this client does not know: ignored (forward compatible),
        /// but a request waiting on `requestID` is told it got no answer it can read.
        case unknown(type: String, requestID: Int64?)
    }

    /// The CBOR bytes of a client message; `label` is added to a `hello` (the device's label,
    /// sent when pairing).
    public static func encode(_ message: ClientMsg, label: String? = nil) -> [UInt8] {
        var json = message.json
        if case .hello = message.body, let label, case .object(var o) = json, o["label"] == nil {
            o.append("label", .string(label))
            json = .object(o)
        }
        return CBOREncoder.encode(CBORValue(json))
    }

    /// The CBOR bytes of a host message (for test hosts); `deviceID` is added to a `welcome`.
    public static func encode(_ message: HostMsg, deviceID: DeviceID? = nil) -> [UInt8] {
        var json = message.json
        if case .welcome = message.body, let deviceID, case .object(var o) = json, o["deviceID"] == nil {
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
        guard knownHostTypes.contains(type) else { return .unknown(type: type, requestID: json["requestID"]?.intValue) }
        do {
            if type == "welcome" {
                let f = try Fields(json, "welcome")
                let info = HostInfo(hostName: try f.string("hostName"), hostVersion: try f.string("hostVersion"), scope: try f.enumValue("scope"),
                                    deviceID: try f.optionalString("deviceID").map { DeviceID($0) })
                return .welcome(info, protocolVersion: try f.int("protocolVersion"))
            }
            return .message(try HostMsg(json: json))
        } catch {
            throw RemoteError(.badMessage, "a \(type) message: \(error.message)")
        }
    }

    /// A client message as a test host reads it: the message, and a `hello`'s fields read
    /// directly (its Swift case grows with the protocol).
    public struct ClientIncoming: Sendable {
        public var message: ClientMsg
        /// `hello.protocolVersion`, when the message is a hello.
        public var helloVersion: Int64?
        /// `hello.label`.
        public var label: String?
    }

    /// Decodes a client message (for test hosts).
    public static func decodeClient(_ bytes: [UInt8]) throws(RemoteError) -> ClientIncoming {
        let json = try self.json(bytes)
        do {
            let message = try ClientMsg(json: json)
            let hello = message.type == "hello"
            return ClientIncoming(message: message, helloVersion: hello ? json["protocolVersion"]?.intValue : nil,
                                  label: hello ? json["label"]?.stringValue : nil)
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
        "overlap", "config", "pushInfo", "discarded", "ruleList", "ruleVerdict", "invite", "deviceList", "notifyChannels",
    ]
}
