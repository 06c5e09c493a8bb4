/// Limits of one connection on the local socket.
///
/// The defaults suit the daemon: frames up to 16 MiB (the protocol's largest message), at most
/// 64 MiB waiting to be sent to a peer that does not read, at most 4 MiB of received frames
/// waiting for a consumer before reading pauses.
public struct ConnectionOptions: Sendable, Hashable {
    /// The largest payload accepted in either direction. A peer announcing more is disconnected
    /// (`frameTooLarge`); `send` refuses more (`payloadTooLarge`) and the connection stays open.
    public var maxPayload: Int
    /// The most bytes (frames with their headers) that may wait to be written. A send that would
    /// pass it closes the connection as `tooSlow`: a peer that stops reading costs the sender at
    /// most this much memory. At least one largest frame must fit.
    public var maxQueuedOutgoingBytes: Int
    /// How many bytes of received frames may wait for the consumer of `frames` before the
    /// connection stops reading from the socket (the peer's sends then wait in turn). Not an
    /// error: reading resumes as frames are consumed.
    public var maxBufferedIncomingBytes: Int

    public init(
        maxPayload: Int = FrameDecoder.defaultMaxPayload,
        maxQueuedOutgoingBytes: Int = 64 * 1024 * 1024,
        maxBufferedIncomingBytes: Int = 4 * 1024 * 1024
    ) {
        precondition(maxPayload >= 0 && UInt64(maxPayload) <= UInt64(UInt32.max), "maxPayload must fit in 32 bits")
        precondition(maxQueuedOutgoingBytes >= maxPayload + FrameDecoder.headerSize, "the outgoing limit must hold one largest frame")
        precondition(maxBufferedIncomingBytes > 0, "maxBufferedIncomingBytes must be positive")
        self.maxPayload = maxPayload
        self.maxQueuedOutgoingBytes = maxQueuedOutgoingBytes
        self.maxBufferedIncomingBytes = maxBufferedIncomingBytes
    }
}
