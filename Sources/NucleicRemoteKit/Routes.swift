public import NucleicProtocol

/// Where a `nucleic://` link leads: a QR code to pair with, a notification's session or approval.
public enum Route: Sendable, Hashable {
    /// `nucleic://pair?...`: pair with a host.
    case pair(PairingInvite)
    /// `nucleic://session/<id>`: open a session's detail.
    case session(SessionID)
    /// `nucleic://approval/<id>`: open an approval card (and its session).
    case approval(ApprovalID)

    /// Parses a link. Throws `invalidInput` saying what is wrong with it.
    public init(_ link: String) throws(RemoteError) {
        let prefix = "nucleic://"
        guard link.lowercased().hasPrefix(prefix) else {
            throw RemoteError(.invalidInput, "'\(link)' is not a nucleic:// link")
        }
        let rest = link.dropFirst(prefix.count)
        let path = rest.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        switch parts.first?.lowercased() {
        case "pair":
            self = .pair(try PairingInvite(link))
        case "session", "approval":
            guard parts.count == 2, let id = Self.identifier(parts[1]) else {
                throw RemoteError(.invalidInput, "'\(link)': expected nucleic://\(parts[0])/<id>")
            }
            self = parts[0].lowercased() == "session" ? .session(SessionID(id)) : .approval(ApprovalID(id))
        default:
            throw RemoteError(.invalidInput, "'\(link)': unknown nucleic:// link (pair, session or approval)")
        }
    }

    /// The link for this route.
    public var link: String {
        switch self {
        case .pair(let invite): invite.uri
        case .session(let id): "nucleic://session/\(id.rawValue)"
        case .approval(let id): "nucleic://approval/\(id.rawValue)"
        }
    }

    /// An identifier is lowercase letters, digits and dashes (UUIDv7 text, a backend's id).
    static func identifier(_ text: Substring) -> String? {
        guard !text.isEmpty, text.count <= 128,
            text.unicodeScalars.allSatisfy({ ($0 >= "a" && $0 <= "z") || ($0 >= "A" && $0 <= "Z") || ($0 >= "0" && $0 <= "9") || $0 == "-" || $0 == "_" })
        else { return nil }
        return text.lowercased()
    }
}

/// A pairing invitation, as the host's QR code carries it:
/// `nucleic://pair?v=1&hk=<base64url>&psk=<base64url>&addr=<host:port>[&addr=…]&name=<host name>`.
///
/// ### Invariants
/// - `hostKey` and `secret` are 32 bytes; `addresses` is non-empty; `v` is 1.
public struct PairingInvite: Sendable, Hashable {
    /// The host's static public key: pinned, and checked against the key the host sends.
    public var hostKey: [UInt8]
    /// The one-time pairing secret (the XXpsk3 PSK).
    public var secret: [UInt8]
    /// Where the host listens, in order of preference.
    public var addresses: [String]
    public var hostName: String

    public init(hostKey: [UInt8], secret: [UInt8], addresses: [String], hostName: String) {
        self.hostKey = hostKey
        self.secret = secret
        self.addresses = addresses
        self.hostName = hostName
    }

    public init(_ uri: String) throws(RemoteError) {
        func bad(_ why: String) -> RemoteError { RemoteError(.invalidInput, "not a valid pairing link: \(why)") }
        let prefix = "nucleic://pair?"
        guard uri.hasPrefix(prefix) else { throw bad("it must start with \(prefix)") }
        var version: String?
        var hk: [UInt8]?
        var psk: [UInt8]?
        var addresses: [String] = []
        var name: String?
        for pair in uri.dropFirst(prefix.count).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, let value = Self.percentDecode(kv[1]) else { throw bad("'\(pair)' is not key=value") }
            switch kv[0] {
            case "v": version = value
            case "hk": hk = Base64URL.decode(value)
            case "psk": psk = Base64URL.decode(value)
            case "addr": addresses.append(value)
            case "name": name = value
            default: continue  // later versions may add fields
            }
        }
        guard version == "1" else { throw bad("version \(version ?? "(missing)") is not 1; update this client") }
        guard let hk, hk.count == 32 else { throw bad("hk must be a 32-byte key in base64url") }
        guard let psk, psk.count == 32 else { throw bad("psk must be a 32-byte secret in base64url") }
        guard !addresses.isEmpty else { throw bad("no addr") }
        for address in addresses where !address.contains(":") { throw bad("addr '\(address)' is not host:port") }
        self.init(hostKey: hk, secret: psk, addresses: addresses, hostName: name ?? "host")
    }

    /// The URI form (what a QR code carries).
    public var uri: String {
        var s = "nucleic://pair?v=1&hk=\(Base64URL.encode(hostKey))&psk=\(Base64URL.encode(secret))"
        for a in addresses { s += "&addr=\(Self.percentEncode(a))" }
        return s + "&name=\(Self.percentEncode(hostName))"
    }

    static func percentDecode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var it = Array(text.utf8)[...]
        while let b = it.popFirst() {
            if b == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if b == UInt8(ascii: "%") {
                guard it.count >= 2, let v = UInt8(String(decoding: it.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(v)
                it = it.dropFirst(2)
            } else {
                bytes.append(b)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func percentEncode(_ text: String) -> String {
        var out = ""
        for b in text.utf8 {
            let c = Character(Unicode.Scalar(b))
            if (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || "-._~:[]".utf8.contains(b) {
                out.append(c)
            } else {
                let hex = Array("0123456789ABCDEF")
                out += "%\(hex[Int(b >> 4)])\(hex[Int(b & 15)])"
            }
        }
        return out
    }
}
