/// Constants of Nucleic's secure channel (DESIGN.md §5, docs/NOISE.md).
public enum Noise {
    /// The prologue both sides hash into every handshake: the ASCII bytes `nucleic/1`. A peer
    /// using another prologue fails the handshake at the first encrypted field.
    public static let prologue: [UInt8] = Array("nucleic/1".utf8)
    /// The size of X25519 public and private keys and of the pairing PSK.
    public static let keySize = 32
    /// The largest Noise message, handshake or transport (spec §3).
    public static let maxMessageSize = 65535
    /// The bytes each encrypted field adds (the Poly1305 tag).
    public static let tagSize = 16
}

/// Which side of a handshake this is. The initiator sends the first message (the device, which
/// opens the TCP connection); the responder is the host.
public enum NoiseRole: String, Sendable, Hashable {
    case initiator
    case responder
}

/// The two handshake patterns Nucleic speaks (DESIGN.md §5).
public enum NoisePattern: String, Sendable, Hashable, CaseIterable {
    /// Pairing: `Noise_XXpsk3_25519_ChaChaPoly_SHA256`, the 32-byte pairing secret as PSK.
    ///
    ///     -> e
    ///     <- e, ee, s, es
    ///     -> s, se, psk
    case xxpsk3 = "XXpsk3"
    /// Every later connect: `Noise_IK_25519_ChaChaPoly_SHA256`, the initiator knowing the
    /// responder's static key in advance.
    ///
    ///     <- s
    ///     ...
    ///     -> e, es, s, ss
    ///     <- e, ee, se
    case ik = "IK"

    /// The full protocol name hashed into `h` (spec §8), e.g. `Noise_IK_25519_ChaChaPoly_SHA256`.
    public var protocolName: String { "Noise_\(rawValue)_25519_ChaChaPoly_SHA256" }

    /// Whether the pattern has a `psk` modifier (then every `e` token also calls `MixKey`, spec §9.2).
    public var usesPSK: Bool { self == .xxpsk3 }

    /// The number of handshake messages.
    public var messageCount: Int { messages.count }

    /// The message patterns, alternating initiator (even indexes) and responder (odd).
    var messages: [[NoiseToken]] {
        switch self {
        case .xxpsk3: [[.e], [.e, .ee, .s, .es], [.s, .se, .psk]]
        case .ik: [[.e, .es, .s, .ss], [.e, .ee, .se]]
        }
    }

    /// The responder's pre-message (`<- s` for IK). Neither pattern has an initiator pre-message.
    var responderPreMessage: [NoiseToken] {
        switch self {
        case .xxpsk3: []
        case .ik: [.s]
        }
    }

    /// The bytes message `index` has besides its payload: public keys, encrypted static keys and
    /// tags. Whether a field is encrypted depends only on the tokens processed before it, so this
    /// is fixed per message (XXpsk3: 48, 96, 64; IK: 96, 48).
    public func overhead(ofMessage index: Int) -> Int {
        var hasKey = false
        var size = 0
        for (current, tokens) in messages.enumerated() {
            size = 0
            for token in tokens {
                switch token {
                case .e:
                    size += NoiseSizes.dh
                    if usesPSK { hasKey = true }
                case .s: size += NoiseSizes.dh + (hasKey ? NoiseSizes.tag : 0)
                case .ee, .es, .se, .ss, .psk: hasKey = true
                }
            }
            size += hasKey ? NoiseSizes.tag : 0
            if current == index { break }
        }
        return size
    }
}

/// A handshake token (spec §7.1, §9.2).
enum NoiseToken: Sendable {
    case e, s, ee, es, se, ss, psk
}
