public import NucleicProtocol
public import NucleicStore
import NucleicSystem
public import NucleicWire
public import NucleicSockets

/// The daemon's paired devices, its pairing invite, and the live connections of each device.
///
/// ### Invariants
/// - At most one invite is pending: a new one replaces the one before (the host cannot tell which
///   invite a pairing device holds before the third handshake message, so it offers one PSK).
/// - An invite is used at most once and never after `expiresAt`; `consumeInvite` checks both and
///   removes it in one step (actor-isolated), so two devices racing on one invite cannot both pair.
/// - Revoking a device marks it in the store and closes its live connections before returning:
///   its next handshake gets `unauthorized`, and nothing it sends after the revoke is served.
public actor Pairing {
    /// How long an invite stays usable.
    public static let inviteLifetime: Int64 = 5 * 60 * 1000

    struct PendingInvite {
        let secret: SecretBytes
        let scope: Scope
        let label: String?
        let expiresAt: Timestamp
    }

    public let hostKey: NoiseKeyPair
    public nonisolated let hostName: String
    let store: Store
    var invite: PendingInvite?
    /// `host:port` of the TCP listener, when there is one (set by `RemoteServer`).
    var listening: String?
    var live: [DeviceID: [ObjectIdentifier: TCPConnection]] = [:]

    public init(hostKey: NoiseKeyPair, store: Store, hostName: String) {
        self.hostKey = hostKey
        self.store = store
        self.hostName = hostName
    }

    /// The `hk` of the pairing URI.
    public nonisolated var hostKeyText: String { Base64URL.encode(hostKey.publicKey) }

    func setListening(_ address: String?) { listening = address }

    // MARK: Invites

    /// A new invite (replacing any pending one). `addresses` default to the listener's address;
    /// a listener on a wildcard address needs them given (`nucleic pair --advertise`).
    public func createInvite(scope: Scope, label: String?, addresses: [String], now: Timestamp = .now()) throws(SessionError) -> Invite {
        guard let listening else {
            throw SessionError(.notReady, "the daemon does not listen for devices: `nucleic config set listen ADDR:PORT`, then "
                + "`nucleic stop-daemon` (sessions keep running; the next command starts a daemon that listens), "
                + "or run `nucleic serve --listen ADDR:PORT`")
        }
        var advertised = addresses
        if advertised.isEmpty {
            if listening.hasPrefix("0.0.0.0:") || listening.hasPrefix("[::]:") {
                throw SessionError(.badMessage, "the daemon listens on \(listening), every interface: say which address devices should use with --advertise HOST:PORT")
            }
            advertised = [listening]
        }
        for address in advertised where !Self.isHostPort(address) {
            throw SessionError(.badMessage, "\(address) is not HOST:PORT")
        }
        let secret = SecretBytes.random(count: Noise.keySize)
        let expiresAt = Timestamp(millisecondsSince1970: now.millisecondsSince1970 + Self.inviteLifetime)
        invite = PendingInvite(secret: secret, scope: scope, label: label, expiresAt: expiresAt)
        let uri = secret.withUnsafeBytes { PairingURI(hostKey: hostKey.publicKey, psk: Array($0), addresses: advertised, name: hostName).string }
        return Invite(uri: uri, hostKey: hostKeyText, addresses: advertised, scope: scope, label: label, expiresAt: expiresAt)
    }

    /// The pending invite's secret, if one is usable now (the PSK the handshake runs with).
    func pendingSecret(now: Timestamp = .now()) -> SecretBytes? {
        guard let invite, invite.expiresAt > now else { return nil }
        return invite.secret
    }

    /// Uses the invite `secret` belongs to and stores the device: the XXpsk3 handshake with that
    /// secret completed with `publicKey` as the device's static key. `labelled`: the invite named
    /// the device (else its `hello` may).
    func consumeInvite(secret: SecretBytes, publicKey: [UInt8], now: Timestamp = .now()) async throws(SessionError) -> (record: DeviceRecord, labelled: Bool) {
        guard let pending = invite, pending.secret === secret else {
            throw SessionError(.unauthorized, "the invite was used or replaced while this device was pairing")
        }
        invite = nil
        guard pending.expiresAt > now else { throw SessionError(.unauthorized, "the invite expired") }
        do {
            if let existing = try await store.device(publicKey: publicKey) {
                throw SessionError(.conflict, "this device's key is already paired as \(existing.id)\(existing.isRevoked ? " (revoked)" : ""); a re-pairing device needs a new key")
            }
            let record = DeviceRecord(label: pending.label ?? "device", scope: pending.scope, publicKey: publicKey)
            try await store.insert(record)
            HostLog.info("paired device \(record.id) (\(record.label), scope \(record.scope.rawValue))")
            return (record, pending.label != nil)
        } catch let error as SessionError { throw error } catch { throw SessionError(.internalError, "storing the device: \(error)") }
    }

    // MARK: Devices

    /// The paired, unrevoked device with this static key.
    func device(publicKey: [UInt8]) async -> DeviceRecord? {
        guard let record = try? await store.device(publicKey: publicKey), !record.isRevoked else { return nil }
        return record
    }

    /// Whether the device is still paired and unrevoked.
    func isAuthorized(_ id: DeviceID) async -> Bool {
        guard let record = try? await store.device(id: id) else { return false }
        return !record.isRevoked
    }

    func relabel(_ id: DeviceID, label: String) async {
        do { try await store.relabel(device: id, label: label) } catch { HostLog.warning("relabelling device \(id): \(error)") }
    }

    public func devices(includeRevoked: Bool) async throws(SessionError) -> [DeviceInfo] {
        do { return try await store.devices(includeRevoked: includeRevoked).map(info) } catch {
            throw SessionError(.internalError, "\(error)")
        }
    }

    /// Revokes the device `reference` names (an id or unique prefix) and closes its connections.
    public func revoke(_ reference: String) async throws(SessionError) -> DeviceInfo {
        let all: [DeviceRecord]
        do { all = try await store.devices(includeRevoked: true) } catch { throw SessionError(.internalError, "\(error)") }
        let prefix = reference.lowercased()
        let matches = all.filter { $0.id.rawValue.hasPrefix(prefix) }
        guard !prefix.isEmpty, let record = matches.first else { throw SessionError(.notFound, "no device \(reference)") }
        guard matches.count == 1 else { throw SessionError(.ambiguous, "device \(reference) is ambiguous: \(matches.map(\.id.rawValue).joined(separator: ", "))") }
        do { try await store.revoke(device: record.id) } catch { throw SessionError(.internalError, "\(error)") }
        let connections = live.removeValue(forKey: record.id) ?? [:]
        for connection in connections.values { connection.close("device \(record.id) was revoked") }
        HostLog.info("revoked device \(record.id) (\(record.label)); closed \(connections.count) connection(s)")
        do {
            return info(try await store.device(id: record.id) ?? record)
        } catch { throw SessionError(.internalError, "\(error)") }
    }

    /// Records a live connection of a device; false (and nothing recorded) when the device has
    /// been revoked meanwhile.
    func register(_ connection: TCPConnection, device id: DeviceID) async -> Bool {
        guard await isAuthorized(id) else { return false }
        live[id, default: [:]][ObjectIdentifier(connection)] = connection
        return true
    }

    func unregister(_ connection: TCPConnection, device id: DeviceID) {
        live[id]?[ObjectIdentifier(connection)] = nil
        if live[id]?.isEmpty == true { live[id] = nil }
    }

    func info(_ record: DeviceRecord) -> DeviceInfo {
        DeviceInfo(deviceID: record.id, label: record.label, scope: record.scope, publicKey: Base64URL.encode(record.publicKey),
                   createdAt: record.createdAt, revokedAt: record.revokedAt, connections: live[record.id]?.count ?? 0)
    }

    static func isHostPort(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), colon != text.startIndex, let port = Int(text[text.index(after: colon)...]) else { return false }
        return (1...65535).contains(port)
    }
}
