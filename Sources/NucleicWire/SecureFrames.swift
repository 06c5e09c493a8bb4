public import NucleicProtocol
#if canImport(Glibc)
import Glibc  // memmove
#endif

/// The framing of Nucleic's secure channel on a byte stream (DESIGN.md §5, docs/NOISE.md).
///
/// Every Noise message, handshake or transport, is written as a 2-byte big-endian length and then
/// that many bytes. The plaintext of a transport message is one flags byte (bit 0: more fragments
/// of this application message follow; the other bits must be 0) and a fragment of one
/// CBOR-encoded application message. An application message is reassembled from its fragments,
/// up to `maxMessageSize` bytes. Noise's nonce counter orders the frames: a replayed, dropped or
/// reordered frame fails to decrypt.
public enum SecureFrames {
    /// Bytes of the length prefix.
    public static let lengthSize = 2
    /// The largest Noise message a frame carries.
    public static let maxFrameSize = Noise.maxMessageSize
    /// The smallest transport frame: the flags byte and the 16-byte tag.
    public static let minTransportFrameSize = 1 + Noise.tagSize
    /// The largest fragment one transport frame carries: 65535 - 16 (tag) - 1 (flags) = 65518.
    public static let maxFragmentSize = maxFrameSize - Noise.tagSize - 1
    /// The largest reassembled application message: 16 MiB.
    public static let maxMessageSize = 16 * 1024 * 1024
    /// Flags bit 0: more fragments of this message follow.
    public static let moreFragments: UInt8 = 0x01

    /// Frames one Noise message (a handshake message) for the stream: the 2-byte big-endian length,
    /// then the message.
    public static func frame(_ noiseMessage: [UInt8]) throws(SecureFrameError) -> [UInt8] {
        guard !noiseMessage.isEmpty, noiseMessage.count <= maxFrameSize else {
            throw SecureFrameError(.frameTooLarge, "a framed Noise message is 1...65535 bytes, not \(noiseMessage.count)")
        }
        return [UInt8(noiseMessage.count >> 8), UInt8(noiseMessage.count & 0xff)] + noiseMessage
    }
}

/// Why a secure frame stream is broken. After any of these the connection must close; `message`
/// is the reason to log.
public typealias SecureFrameError = CodedError<SecureFrameFailure>

/// The domain of ``SecureFrameError``.
public enum SecureFrameFailure: ErrorDomain {
    public static func describe(_ error: CodedError<Self>) -> String { "secure frame \(error.code): \(error.message)" }
}

extension CodedError.Code where Domain == SecureFrameFailure {
    /// A length prefix announces fewer bytes than the smallest valid frame (0, or less than
    /// the flags byte and tag of a transport frame).
    public static var frameTooShort: Self { Self("frameTooShort") }
    /// A message given to be framed does not fit one frame.
    public static var frameTooLarge: Self { Self("frameTooLarge") }
    /// A frame failed authentication: tampered, replayed, reordered, or another key.
    public static var decryptFailed: Self { Self("decryptFailed") }
    /// The flags byte has bits other than bit 0 set.
    public static var unknownFlags: Self { Self("unknownFlags") }
    /// A fragment announcing more fragments carries no bytes.
    public static var emptyFragment: Self { Self("emptyFragment") }
    /// An application message is (or its fragments add up to) more than the maximum.
    public static var messageTooLarge: Self { Self("messageTooLarge") }
    /// The stream ended inside a frame or between the fragments of a message.
    public static var truncated: Self { Self("truncated") }
    /// The cipher's nonce is exhausted (2^64-1 messages): the session must end.
    public static var nonceExhausted: Self { Self("nonceExhausted") }
}


/// The bytes received and not yet framed, shared by the splitter and the decoder: storage that
/// is reused from message to message, with a read position (`head`) and a write position
/// (`end`). Appending copies into the storage after `end`; when the room there runs out, the
/// unconsumed bytes move to the front, and the storage grows (at least doubling) only if that is
/// not enough, so each byte moves O(1) times and a steady stream allocates nothing.
struct FrameBuffer: Sendable {
    /// The storage kept when the buffer empties: a stream that carried one large message usually
    /// carries more, and a fresh allocation of that size costs more than the cipher.
    static let retainedCapacity = 4 << 20

    /// The storage; the bytes received and not consumed are `bytes[head..<end]`.
    var bytes: [UInt8] = []
    /// The first byte not yet consumed.
    var head = 0
    /// One past the last byte received.
    var end = 0
    /// The stream offset of `bytes[0]`, for error messages.
    var offset = 0

    var unconsumedCount: Int { end - head }

    mutating func append(_ chunk: UnsafeRawBufferPointer) {
        guard let source = chunk.baseAddress, chunk.count > 0 else { return }
        if bytes.count - end < chunk.count { makeRoom(for: chunk.count) }
        let at = end
        bytes.withUnsafeMutableBytes { ($0.baseAddress! + at).copyMemory(from: source, byteCount: chunk.count) }
        end += chunk.count
    }

    /// Makes room for `count` more bytes after `end`: moves the unconsumed bytes to the front of
    /// the storage, or into a larger one when the storage would still be too small.
    private mutating func makeRoom(for count: Int) {
        let unconsumed = end - head
        let needed = unconsumed + count
        if needed > bytes.count {
            var grown = [UInt8](repeating: 0, count: max(needed, 2 * bytes.count, 4096))
            if unconsumed > 0 {
                let from = head
                grown.withUnsafeMutableBytes { target in
                    bytes.withUnsafeBytes { target.baseAddress!.copyMemory(from: $0.baseAddress! + from, byteCount: unconsumed) }
                }
            }
            bytes = grown
        } else if unconsumed > 0 {
            let from = head
            bytes.withUnsafeMutableBytes { memmove($0.baseAddress!, $0.baseAddress! + from, unconsumed) }
        }
        offset += head
        head = 0
        end = unconsumed
    }

    /// The range of the next complete frame's Noise message in `bytes`, nil while it is incomplete.
    /// A length below `minimum` throws as soon as the 2 length bytes have arrived.
    func nextFrame(minimum: Int) throws(SecureFrameError) -> Range<Int>? {
        guard unconsumedCount >= SecureFrames.lengthSize else { return nil }
        let length = Int(bytes[head]) << 8 | Int(bytes[head + 1])
        guard length >= minimum else {
            throw SecureFrameError(.frameTooShort, "the frame at stream byte \(offset + head) announces \(length) bytes; a frame here has at least \(minimum)")
        }
        let start = head + SecureFrames.lengthSize
        guard end - start >= length else { return nil }
        return start..<(start + length)
    }

    /// Consumes the bytes before `position` (the end of a frame). When nothing is left, the
    /// storage is kept for what comes next (up to `retainedCapacity`).
    mutating func consume(through position: Int) {
        head = position
        guard head == end else { return }
        offset += end
        head = 0
        end = 0
        if bytes.count > Self.retainedCapacity { bytes = [] }
    }

    /// Hands over every unconsumed byte.
    mutating func takeAll() -> [UInt8] {
        let rest = Array(bytes[head..<end])
        offset += end
        bytes = []
        head = 0
        end = 0
        return rest
    }
}
