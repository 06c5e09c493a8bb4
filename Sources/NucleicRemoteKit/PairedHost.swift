public import NucleicProtocol
public import NucleicWire

/// A host this device has paired with: what it pinned, and what the host said about it.
///
/// ### Invariants
/// - `hostKey` is the 32-byte static key from the pairing link, checked during pairing; every
///   later connect (IK) uses it, so another host cannot stand in.
/// - The JSON form holds no secret (the device's private key is stored beside it, by the app).
public struct PairedHost: Sendable, Hashable, JSONRepresentable {
    public var hostKey: [UInt8]
    public var addresses: [String]
    public var hostName: String
    public var deviceID: DeviceID?
    public var scope: Scope
    /// This device's label on the host ("Ana's iPhone").
    public var label: String

    public init(hostKey: [UInt8], addresses: [String], hostName: String, deviceID: DeviceID?, scope: Scope, label: String) {
        self.hostKey = hostKey
        self.addresses = addresses
        self.hostName = hostName
        self.deviceID = deviceID
        self.scope = scope
        self.label = label
    }

    public var json: JSONValue {
        var o = JSONObject()
        o.append("hostKey", .string(Base64URL.encode(hostKey)))
        o.append("addresses", .array(addresses.map(JSONValue.string)))
        o.append("hostName", .string(hostName))
        o.append("deviceID", ifPresent: deviceID.map { .string($0.rawValue) })
        o.append("scope", .string(scope.rawValue))
        o.append("label", .string(label))
        return .object(o)
    }

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "paired host")
        guard let key = Base64URL.decode(try f.string("hostKey")), key.count == 32 else { throw ShapeError("paired host: hostKey must be 32 bytes in base64url") }
        self.init(
            hostKey: key, addresses: (f["addresses"]?.arrayValue ?? []).compactMap(\.stringValue), hostName: try f.string("hostName"),
            deviceID: try f.optionalString("deviceID").map { DeviceID($0) }, scope: try f.enumValue("scope"), label: try f.string("label"))
    }
}

extension Connection {
    /// Pairs with a host from its invitation (`Noise_XXpsk3`, the invite's secret as PSK, the
    /// host's static key checked against the invite's `hk`), says `hello` with this device's
    /// label, and returns what to keep once the host welcomed it. The pairing connection is then
    /// closed; later connects use IK with the pinned key.
    ///
    /// Throws `handshakeFailed` when the host's key is not the invite's or the secret is wrong
    /// (the invite was used, expired or mistyped), `unauthorized` when the host refuses.
    public static func pair(
        invite: PairingInvite, identity: NoiseKeyPair, label: String, clientName: String, dialer: any Dialer
    ) async throws(RemoteError) -> PairedHost {
        var lastError = RemoteError(.hostUnreachable, "the invitation has no address")
        for address in invite.addresses {
            let transport: any Transport
            do { transport = try await dialer.connect(to: address) } catch {
                lastError = error
                continue
            }
            let handshake: HandshakeState
            do {
                handshake = try HandshakeState(pattern: .xxpsk3, role: .initiator, localStatic: identity, remoteStatic: invite.hostKey,
                                               psk: SecretBytes(copying: invite.secret))
            } catch {
                await transport.close()
                throw RemoteError(.invalidInput, "cannot start pairing: \(error)")
            }
            let link = try await Handshake.perform(handshake, over: transport)
            let info: HostInfo
            do throws(RemoteError) {
                (info, _) = try await greet(link, clientName: clientName, label: label)
            } catch {
                await link.close()
                throw error
            }
            await link.close()
            return PairedHost(hostKey: invite.hostKey, addresses: invite.addresses, hostName: info.hostName, deviceID: info.deviceID,
                              scope: info.scope, label: label)
        }
        throw lastError
    }

    /// Sends `hello` and reads the answer: the host's info, or the error it sent.
    static func greet(_ link: any MessageLink, clientName: String, label: String?) async throws(RemoteError) -> (HostInfo, Int64) {
        try await link.send(RemoteWire.encode(ClientMsg(.hello(protocolVersion: protocolVersion, client: clientName)), label: label))
        guard let bytes = try await link.receive() else {
            throw RemoteError(.closed, "the host closed the connection before welcoming this device")
        }
        let message: HostMsg
        switch try RemoteWire.decodeHost(bytes) {
        case .welcome(let info, let version): return (info, version)
        case .unknown(let type, _): throw RemoteError(.badMessage, "the host answered hello with an unknown \(type)")
        case .message(let m): message = m
        }
        switch message.body {
        case .error(.unauthorized, let text, _):
            throw RemoteError(.unauthorized, "the host refused this device: \(text)")
        case .error(.protocolVersion, let text, _):
            throw RemoteError(.protocolVersion, "the host speaks another protocol version: \(text)")
        case .error(let code, let text, _):
            throw RemoteError(.badMessage, "the host answered hello with \(code.rawValue): \(text)")
        default:
            throw RemoteError(.badMessage, "the host answered hello with \(message.type), not welcome")
        }
    }

    /// The protocol version this client speaks.
    public static let protocolVersion: Int64 = 1
}
