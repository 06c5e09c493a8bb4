/// A pairing invite as the daemon hands it to the local CLI (`createInvite` → `invite`).
///
/// The secret itself travels only inside `uri` (the `psk` parameter); the daemon holds the
/// invite until it is used once or `expiresAt` passes (docs/PROTOCOL.md, "Pairing").
public struct Invite: Sendable, Hashable, JSONRepresentable {
    /// `nucleic://pair?v=1&hk=…&psk=…&addr=…&name=…`
    public var uri: String
    /// The host's static public key, base64url without padding (the `hk` of the URI).
    public var hostKey: String
    /// `host:port` addresses a device may connect to.
    public var addresses: [String]
    /// The scope the paired device will get.
    public var scope: Scope
    /// The label the device will be listed under unless its `hello` names one.
    public var label: String?
    public var expiresAt: Timestamp

    public init(uri: String, hostKey: String, addresses: [String], scope: Scope, label: String?, expiresAt: Timestamp) {
        self.uri = uri
        self.hostKey = hostKey
        self.addresses = addresses
        self.scope = scope
        self.label = label
        self.expiresAt = expiresAt
    }

    public var json: JSONValue {
        var o: JSONObject = [
            "uri": .string(uri), "hostKey": .string(hostKey), "addresses": .array(addresses.map(JSONValue.string)),
            "scope": .string(scope.rawValue),
        ]
        o.append("label", ifPresent: label.map(JSONValue.string))
        o.append("expiresAt", .string(expiresAt.description))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "invite")
        guard let expiresAt = Timestamp(try f.string("expiresAt")) else { throw ShapeError("invite: bad expiresAt") }
        self.init(uri: try f.string("uri"), hostKey: try f.string("hostKey"),
                  addresses: (f["addresses"]?.arrayValue ?? []).compactMap(\.stringValue), scope: try f.enumValue("scope"),
                  label: try f.optionalString("label"), expiresAt: expiresAt)
    }
}

/// A paired device as clients see it (`listDevices`).
public struct DeviceInfo: Sendable, Hashable, JSONRepresentable {
    public var deviceID: DeviceID
    public var label: String
    public var scope: Scope
    /// The device's static public key, base64url without padding.
    public var publicKey: String
    public var createdAt: Timestamp
    public var revokedAt: Timestamp?
    /// Encrypted connections from this device open right now.
    public var connections: Int

    public init(deviceID: DeviceID, label: String, scope: Scope, publicKey: String, createdAt: Timestamp, revokedAt: Timestamp?,
                connections: Int = 0) {
        self.deviceID = deviceID
        self.label = label
        self.scope = scope
        self.publicKey = publicKey
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.connections = connections
    }

    public var json: JSONValue {
        var o: JSONObject = [
            "deviceID": .string(deviceID.rawValue), "label": .string(label), "scope": .string(scope.rawValue),
            "publicKey": .string(publicKey), "createdAt": .string(createdAt.description),
        ]
        o.append("revokedAt", ifPresent: revokedAt.map { .string($0.description) })
        o.append("connections", .int(Int64(connections)))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "device")
        guard let createdAt = Timestamp(try f.string("createdAt")) else { throw ShapeError("device: bad createdAt") }
        let revokedAt = try f.optionalString("revokedAt").map { text throws(ShapeError) -> Timestamp in
            guard let t = Timestamp(text) else { throw ShapeError("device: bad revokedAt") }
            return t
        }
        self.init(deviceID: DeviceID(try f.string("deviceID")), label: try f.string("label"), scope: try f.enumValue("scope"),
                  publicKey: try f.string("publicKey"), createdAt: createdAt, revokedAt: revokedAt,
                  connections: Int(try f.optionalInt("connections") ?? 0))
    }
}

/// Base64url without padding (RFC 4648 §5), as the pairing URI carries keys.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)]]
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out += [alphabet[Int(n >> 18)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text`, or nil when it is not unpadded base64url.
    public static func decode(_ text: String) -> [UInt8]? {
        var values: [UInt8] = []
        for c in text.utf8 {
            guard let v = alphabet.firstIndex(of: c) else { return nil }
            values.append(UInt8(v))
        }
        if values.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < values.count {
            let chunk = values[i..<min(i + 4, values.count)]
            var n: UInt32 = 0
            for (k, v) in chunk.enumerated() { n |= UInt32(v) << (18 - 6 * k) }
            out.append(UInt8(n >> 16))
            if chunk.count > 2 { out.append(UInt8(n >> 8 & 0xff)) }
            if chunk.count > 3 { out.append(UInt8(n & 0xff)) }
            i += 4
        }
        return out
    }
}

/// `nucleic://pair?v=1&hk=<base64url>&psk=<base64url>&addr=<host:port>[&addr=…]&name=<host name>`
/// (docs/PROTOCOL.md, "Pairing URI"). Keys are base64url without padding; `name` is
/// percent-encoded (RFC 3986 unreserved characters stay as they are).
public struct PairingURI: Sendable, Hashable {
    public var hostKey: [UInt8]
    public var psk: [UInt8]
    public var addresses: [String]
    public var name: String

    public init(hostKey: [UInt8], psk: [UInt8], addresses: [String], name: String) {
        self.hostKey = hostKey
        self.psk = psk
        self.addresses = addresses
        self.name = name
    }

    public var string: String {
        var parts = ["v=1", "hk=" + Base64URL.encode(hostKey), "psk=" + Base64URL.encode(psk)]
        parts += addresses.map { "addr=" + Self.percentEncode($0) }
        parts.append("name=" + Self.percentEncode(name))
        return "nucleic://pair?" + parts.joined(separator: "&")
    }

    /// Parses a pairing URI; unknown parameters are ignored.
    public init(parsing text: String) throws(ShapeError) {
        let prefix = "nucleic://pair?"
        guard text.hasPrefix(prefix) else { throw ShapeError("a pairing URI starts with \(prefix)") }
        var version: String?
        var hk: [UInt8]?
        var psk: [UInt8]?
        var addresses: [String] = []
        var name = ""
        for pair in text.dropFirst(prefix.count).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let value = Self.percentDecode(parts[1]) else { throw ShapeError("pairing URI: bad parameter \(pair)") }
            switch parts[0] {
            case "v": version = value
            case "hk": hk = Base64URL.decode(value)
            case "psk": psk = Base64URL.decode(value)
            case "addr": addresses.append(value)
            case "name": name = value
            default: break
            }
        }
        guard version == "1" else { throw ShapeError("pairing URI: version \(version ?? "missing"), this client knows 1") }
        guard let hk, hk.count == 32 else { throw ShapeError("pairing URI: hk is not a 32-byte base64url key") }
        guard let psk, psk.count == 32 else { throw ShapeError("pairing URI: psk is not a 32-byte base64url secret") }
        guard !addresses.isEmpty else { throw ShapeError("pairing URI: no addr") }
        self.init(hostKey: hk, psk: psk, addresses: addresses, name: name)
    }

    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    static func percentDecode(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let a = iterator.next(), let b = iterator.next(), let value = UInt8(String(decoding: [a, b], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
            } else if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
