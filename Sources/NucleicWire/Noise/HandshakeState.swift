import CSodium

/// The Noise `HandshakeState` (spec §5.3) for `Noise_XXpsk3_25519_ChaChaPoly_SHA256` and
/// `Noise_IK_25519_ChaChaPoly_SHA256`, with the prologue `nucleic/1`.
///
/// Drive it by `step`: `writeMessage(payload:)` when it is `.write`, `readMessage(_:)` (which
/// returns the peer's payload) when it is `.read`, and `finish()` once it is `.complete` to get the
/// transport `SecureChannel`. Messages travel framed as docs/NOISE.md says; this type only sees
/// whole Noise messages.
///
/// ### Invariants
/// - An error while writing or reading a message fails the handshake for good: every later call
///   throws `wrongState`, and no transport keys are ever produced. Errors are thrown, never
///   trapped, whatever the bytes.
/// - A call out of turn (which includes any message after completion) and a payload too large
///   for its message are refused before any state changes. A received message whose length does
///   not fit the pattern is refused before anything is decrypted.
/// - When a remote static key was pinned (`remoteStatic` for XXpsk3, or for an IK responder), a
///   different key from the peer fails the handshake as soon as it is decrypted
///   (`remoteStaticMismatch`). The IK initiator's `remoteStatic` is the `<- s` pre-message: a
///   responder with another key cannot decrypt the first message.
/// - With XXpsk3 a wrong PSK fails authentication when the responder (the host) reads the third
///   message; no transport keys exist on its side.
/// - Private keys, the PSK, the chaining key and every DH result stay in `SecretBytes`.
public struct HandshakeState: ~Copyable, Sendable {
    /// What the handshake expects next.
    public enum Step: Sendable, Hashable {
        /// Call `writeMessage(payload:)`.
        case write
        /// Call `readMessage(_:)` with the peer's next message.
        case read
        /// Every message has been processed: call `finish()`.
        case complete
        /// An earlier call failed; the connection must close.
        case failed
    }

    /// The handshake pattern.
    public let pattern: NoisePattern
    /// This side's role.
    public let role: NoiseRole
    /// The peer's static public key: known from the start for an IK initiator, otherwise set once
    /// the message carrying it has been read (XXpsk3: the second message for the initiator, the
    /// third for the responder; IK responder: the first). The host looks a device up by it.
    public private(set) var remoteStaticKey: [UInt8]?

    private var symmetric: SymmetricState
    private let localStatic: NoiseKeyPair
    private var localEphemeral: NoiseKeyPair?
    private var remoteEphemeralKey: [UInt8]?
    private let pinnedRemoteStatic: [UInt8]?
    private let psk: SecretBytes?
    private var messageIndex = 0
    private var transport: CipherStatePair?
    private var failure: NoiseError?

    /// Starts a handshake (`Initialize`).
    ///
    /// - Parameters:
    ///   - pattern: `.xxpsk3` for pairing, `.ik` for every later connect.
    ///   - role: `.initiator` (the device) or `.responder` (the host).
    ///   - localStatic: this side's static key pair.
    ///   - remoteStatic: the peer's static public key when it is known in advance. Required for an
    ///     IK initiator (the host key it pinned at pairing). Otherwise optional: the key the peer
    ///     sends must then equal it (a device pairing with XXpsk3 pins the `hk` of the pairing URI).
    ///   - psk: the 32-byte pairing secret; required for XXpsk3, refused for IK.
    ///   - prologue: `Noise.prologue` (`nucleic/1`) unless testing against published vectors.
    public init(
        pattern: NoisePattern, role: NoiseRole, localStatic: NoiseKeyPair, remoteStatic: [UInt8]? = nil,
        psk: SecretBytes? = nil, prologue: [UInt8] = Noise.prologue
    ) throws(NoiseError) {
        try self.init(pattern: pattern, role: role, localStatic: localStatic, remoteStatic: remoteStatic, psk: psk, prologue: prologue, ephemeral: nil)
    }

    /// As the public initializer, with a fixed ephemeral key pair: only for known-answer tests.
    init(
        pattern: NoisePattern, role: NoiseRole, localStatic: NoiseKeyPair, remoteStatic: [UInt8]?,
        psk: SecretBytes?, prologue: [UInt8], ephemeral: NoiseKeyPair?
    ) throws(NoiseError) {
        if let remoteStatic, remoteStatic.count != NoiseSizes.dh {
            throw NoiseError(.invalidKey, "the remote static key is 32 bytes, not \(remoteStatic.count)")
        }
        if pattern == .ik, role == .initiator, remoteStatic == nil {
            throw NoiseError(.invalidConfiguration, "an IK initiator needs the responder's static key (the host key pinned at pairing)")
        }
        if pattern.usesPSK {
            guard let psk else {
                throw NoiseError(.invalidConfiguration, "\(pattern.protocolName) needs the 32-byte pairing secret as PSK")
            }
            guard psk.count == Noise.keySize else {
                throw NoiseError(.invalidKey, "the PSK is 32 bytes, not \(psk.count)")
            }
        } else if psk != nil {
            throw NoiseError(.invalidConfiguration, "\(pattern.protocolName) takes no PSK")
        }
        self.pattern = pattern
        self.role = role
        self.localStatic = localStatic
        self.localEphemeral = ephemeral
        self.psk = psk
        self.pinnedRemoteStatic = remoteStatic
        self.remoteStaticKey = pattern == .ik && role == .initiator ? remoteStatic : nil

        symmetric = SymmetricState(protocolName: Array(pattern.protocolName.utf8))
        symmetric.mixHash(prologue)
        // Pre-messages: only IK's `<- s`, the responder's static key.
        for token in pattern.responderPreMessage {
            precondition(token == .s, "only static keys appear in Nucleic's pre-messages")
            symmetric.mixHash(role == .responder ? localStatic.publicKey : remoteStaticKey!)
        }
    }

    /// What the handshake expects next.
    public var step: Step {
        if failure != nil { return .failed }
        if messageIndex == pattern.messageCount { return .complete }
        return (messageIndex % 2 == 0) == (role == .initiator) ? .write : .read
    }

    /// Whether every handshake message has been processed.
    public var isComplete: Bool { step == .complete }

    /// `h`: after completion, a value both sides share that identifies this session (for channel
    /// binding, spec §11.2).
    public var handshakeHash: [UInt8] { symmetric.hash }

    /// The largest payload the next message can carry: 65535 minus its keys and tags.
    public var maxPayloadSize: Int {
        guard messageIndex < pattern.messageCount else { return 0 }
        return Noise.maxMessageSize - pattern.overhead(ofMessage: messageIndex)
    }

    /// `WriteMessage(payload)`: the next handshake message, carrying `payload`.
    ///
    /// Every payload is encrypted, but not every one is secret: XXpsk3's first payload is
    /// encrypted under keys derived only from public values (the PSK enters at the third message),
    /// and the first message of either pattern has no forward secrecy. Put nothing secret there.
    public mutating func writeMessage(payload: [UInt8] = []) throws(NoiseError) -> [UInt8] {
        try checkStep(.write, "write a handshake message")
        guard payload.count <= maxPayloadSize else {
            throw NoiseError(.messageTooLarge, "a payload of \(payload.count) bytes does not fit handshake message \(messageIndex + 1) (at most \(maxPayloadSize) bytes)")
        }
        do throws(NoiseError) {
            var out: [UInt8] = []
            out.reserveCapacity(pattern.overhead(ofMessage: messageIndex) + payload.count)
            for token in pattern.messages[messageIndex] {
                switch token {
                case .e:
                    let ephemeral = localEphemeral ?? NoiseKeyPair.generate()
                    localEphemeral = ephemeral
                    out.append(contentsOf: ephemeral.publicKey)
                    mixEphemeral(ephemeral.publicKey)
                case .s:
                    try localStatic.publicKey.withBytes { (key) throws(NoiseError) in
                        try symmetric.encryptAndHash(key, appendingTo: &out)
                    }
                case .ee, .es, .se, .ss, .psk:
                    try mix(token)
                }
            }
            try payload.withBytes { (payload) throws(NoiseError) in
                try symmetric.encryptAndHash(payload, appendingTo: &out)
            }
            advance()
            return out
        } catch {
            failure = error
            throw error
        }
    }

    /// `ReadMessage(message)`: processes the peer's next handshake message and returns its payload.
    public mutating func readMessage(_ message: [UInt8]) throws(NoiseError) -> [UInt8] {
        try checkStep(.read, "read a handshake message")
        do throws(NoiseError) {
            let overhead = pattern.overhead(ofMessage: messageIndex)
            guard message.count >= overhead, message.count <= Noise.maxMessageSize else {
                throw NoiseError(.invalidMessage, "handshake message \(messageIndex + 1) of \(pattern.protocolName) is \(message.count) bytes; it must be \(overhead)...\(Noise.maxMessageSize)")
            }
            var offset = 0
            for token in pattern.messages[messageIndex] {
                switch token {
                case .e:
                    let key = Array(message[offset..<(offset + NoiseSizes.dh)])
                    offset += NoiseSizes.dh
                    remoteEphemeralKey = key
                    mixEphemeral(key)
                case .s:
                    let length = NoiseSizes.dh + (symmetric.cipher.hasKey ? NoiseSizes.tag : 0)
                    let key = try symmetric.decryptAndHash(message[offset..<(offset + length)])
                    offset += length
                    if let pinned = pinnedRemoteStatic, !Self.equal(pinned, key) {
                        throw NoiseError(.remoteStaticMismatch, "the peer's static key is not the pinned one: it is another host or device (pair again if the key really changed)")
                    }
                    remoteStaticKey = key
                case .ee, .es, .se, .ss, .psk:
                    try mix(token)
                }
            }
            let payload = try symmetric.decryptAndHash(message[offset...])
            advance()
            return payload
        } catch {
            failure = error
            throw error
        }
    }

    /// The transport channel, once the handshake is complete.
    public consuming func finish() throws(NoiseError) -> SecureChannel {
        try checkStep(.complete, "finish the handshake")
        guard let pair = transport.take(), let remoteStaticKey else {
            throw NoiseError(.wrongState, "the handshake has no transport keys")
        }
        return SecureChannel(role: role, pair: pair, remoteStaticKey: remoteStaticKey, handshakeHash: symmetric.hash)
    }

    // MARK: - Tokens

    /// `MixHash(e)`, and with a PSK also `MixKey(e)` (spec §9.2).
    private mutating func mixEphemeral(_ key: [UInt8]) {
        symmetric.mixHash(key)
        if pattern.usesPSK { key.withUnsafeBytes { symmetric.mixKey($0) } }
    }

    /// The DH tokens and `psk`, the same whether writing or reading.
    private mutating func mix(_ token: NoiseToken) throws(NoiseError) {
        let initiator = role == .initiator
        let local: NoiseKeyPair?
        let remote: [UInt8]?
        switch token {
        case .psk:
            symmetric.mixKeyAndHash(psk!)  // checked in init: a PSK pattern always has one
            return
        case .ee: (local, remote) = (localEphemeral, remoteEphemeralKey)
        case .es: (local, remote) = initiator ? (localEphemeral, remoteStaticKey) : (localStatic, remoteEphemeralKey)
        case .se: (local, remote) = initiator ? (localStatic, remoteEphemeralKey) : (localEphemeral, remoteStaticKey)
        case .ss: (local, remote) = (localStatic, remoteStaticKey)
        case .e, .s: preconditionFailure("not a DH token")
        }
        guard let local, let remote else {
            throw NoiseError(.wrongState, "token \(token) of \(pattern.protocolName) came before the keys it needs")
        }
        symmetric.mixKey(try X25519.dh(local.privateKey, remote))
    }

    private static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in sodium_memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0 } }
    }

    private mutating func advance() {
        messageIndex += 1
        if messageIndex == pattern.messageCount {
            transport = symmetric.split()
            localEphemeral = nil
        }
    }

    private func checkStep(_ expected: Step, _ action: String) throws(NoiseError) {
        let current = step
        guard current != expected else { return }
        let why = switch current {
        case .failed: "the handshake already failed (\(failure!.description))"
        case .complete: "the handshake is already complete; transport messages go through the SecureChannel"
        case .write: "it is this side's turn to write message \(messageIndex + 1)"
        case .read: messageIndex < pattern.messageCount ? "this side is waiting for message \(messageIndex + 1) from the peer" : "the handshake is incomplete"
        }
        throw NoiseError(.wrongState, "cannot \(action): \(why)")
    }
}
