/// Turns application messages (CBOR bytes) into encrypted frames for the stream.
///
/// A message is cut into fragments of at most `maxFragmentSize` bytes; each becomes one Noise
/// transport message whose plaintext is a flags byte (bit 0 set on every fragment but the last)
/// and the fragment, written as a 2-byte big-endian length and the ciphertext. An empty message is
/// one frame with an empty final fragment.
///
/// ### Invariants
/// - Every frame is at most 65535 bytes after its length prefix; every non-final fragment is
///   non-empty; a message larger than `maxMessageSize` is refused before anything is encrypted,
///   so the encoder never sends what a conforming decoder would refuse.
/// - `encode` either returns every frame of the message or throws and adds nothing. After
///   `nonceExhausted` the encoder stays failed: the connection must close.
public struct SecureFrameEncoder: ~Copyable, Sendable {
    /// The largest application message accepted.
    public let maxMessageSize: Int
    /// The largest fragment per frame.
    public let maxFragmentSize: Int
    private var cipher: CipherState
    private var failure: SecureFrameError?
    /// The bytes a frame's tag takes, appended before it is sealed in place.
    private static let tagRoom = [UInt8](repeating: 0, count: Noise.tagSize)

    /// An encoder sending with `cipher` (a `SecureChannel`'s `sender`).
    ///
    /// `maxFragmentSize` is clamped to 1...65518; smaller fragments only serve tests of reassembly.
    public init(cipher: consuming CipherState, maxMessageSize: Int = SecureFrames.maxMessageSize, maxFragmentSize: Int = SecureFrames.maxFragmentSize) {
        self.cipher = cipher
        self.maxMessageSize = max(0, maxMessageSize)
        self.maxFragmentSize = min(max(1, maxFragmentSize), SecureFrames.maxFragmentSize)
    }

    /// The number of frames a message of `size` bytes takes.
    public func frameCount(forMessageSize size: Int) -> Int {
        size == 0 ? 1 : (size + maxFragmentSize - 1) / maxFragmentSize
    }

    /// The frames carrying `message`, ready to write.
    public mutating func encode(_ message: [UInt8]) throws(SecureFrameError) -> [UInt8] {
        var out: [UInt8] = []
        try message.withBytes { (message) throws(SecureFrameError) in
            try encode(message, appendingTo: &out)
        }
        return out
    }

    /// Appends the frames carrying `message` to `out`.
    public mutating func encode(_ message: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) throws(SecureFrameError) {
        if let failure { throw failure }
        guard message.count <= maxMessageSize else {
            throw SecureFrameError(.messageTooLarge, "an application message of \(message.count) bytes exceeds the \(maxMessageSize)-byte limit")
        }
        let frames = frameCount(forMessageSize: message.count)
        let overhead = SecureFrames.lengthSize + 1 + Noise.tagSize
        let start = out.count
        out.reserveCapacity(start + message.count + frames * overhead)
        // Each frame is appended as its length and flags bytes, the fragment and room for the
        // tag (copies from contiguous memory), then sealed where it stands.
        var position = 0
        do {
            for index in 0..<frames {
                let fragment = min(maxFragmentSize, message.count - position)
                let noiseLength = 1 + fragment + Noise.tagSize
                let frameStart = out.count
                out.append(UInt8(noiseLength >> 8))
                out.append(UInt8(noiseLength & 0xff))
                out.append(index == frames - 1 ? 0 : SecureFrames.moreFragments)
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: message[position..<(position + fragment)]))
                out.append(contentsOf: Self.tagRoom)
                position += fragment
                try out.withMutableBytes { (bytes) throws(NoiseError) in
                    let body = UnsafeMutableRawBufferPointer(rebasing: bytes[(frameStart + SecureFrames.lengthSize)...])
                    try cipher.encrypt(ad: UnsafeRawBufferPointer(start: nil, count: 0), inPlace: body)
                }
            }
        } catch {
            out.removeSubrange(start...)
            let failed = SecureFrameError(.nonceExhausted, "cannot send: \(error.message)")
            failure = failed
            throw failed
        }
    }
}
