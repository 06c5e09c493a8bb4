public import NucleicProtocol

/// The host's VAPID identity (RFC 8292): its P-256 key (`vapid.pem` in the home, created once,
/// mode 0600) and the contact it names (`sub`). A push service checks the ES256 JWT a request
/// carries against the public key a subscription was made with.
public struct VAPID: Sendable {
    public let key: P256Key
    /// `mailto:` or `https:` contact for the push service's operators.
    public let subject: String

    public init(key: P256Key, subject: String) {
        self.key = key
        self.subject = subject
    }

    /// The public key in base64url: the `applicationServerKey` a client subscribes with.
    public var publicKeyText: String { Base64URLCodec.encode(key.publicKey) }

    /// The JWT for one push service origin: `{"typ":"JWT","alg":"ES256"}` and claims `aud` (the
    /// origin), `exp` (12 hours on, under the 24 the RFC allows) and `sub`.
    public func token(audience: String, now: Timestamp) throws(NotifyError) -> String {
        var claims = JSONObject()
        claims.append("aud", .string(audience))
        claims.append("exp", .int(now.millisecondsSince1970 / 1000 + 12 * 3600))
        claims.append("sub", .string(subject))
        return try JWT.es256(header: [("typ", "JWT")], claims: .object(claims), key: key)
    }

    /// The `Authorization` header value: `vapid t=<jwt>,k=<public key>`. No space after the
    /// comma: RFC 8292 allows one, but some verifiers (py_vapid) split on the bare comma.
    public func authorization(endpoint: String, now: Timestamp) throws(NotifyError) -> String {
        guard let audience = Self.origin(endpoint) else { throw NotifyError("the push endpoint \(endpoint) is not an http(s) URL") }
        return "vapid t=\(try token(audience: audience, now: now)),k=\(publicKeyText)"
    }

    /// `scheme://host[:port]` of a URL, or nil.
    public static func origin(_ url: String) -> String? {
        let scheme: String
        if url.lowercased().hasPrefix("https://") { scheme = "https" } else if url.lowercased().hasPrefix("http://") { scheme = "http" } else { return nil }
        let rest = url.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else { return nil }
        return "\(scheme)://\(authority.lowercased())"
    }
}

/// Compact JWS with ES256 (RFC 7515, RFC 7518 §3.4): what VAPID and APNs token auth sign.
public enum JWT {
    /// `base64url(header).base64url(claims).base64url(r || s)`; `alg` is ES256, `header` adds
    /// its other fields in order.
    public static func es256(header: [(String, String)], claims: JSONValue, key: P256Key) throws(NotifyError) -> String {
        var h = JSONObject()
        for (name, value) in header { h.append(name, .string(value)) }
        h.append("alg", .string("ES256"))
        let input = Base64URLCodec.encode(Array(JSONWriter.string(.object(h)).utf8)) + "."
            + Base64URLCodec.encode(Array(JSONWriter.string(claims).utf8))
        return input + "." + Base64URLCodec.encode(try key.signES256(Array(input.utf8)))
    }
}
