public import NucleicWire

/// A transport after a completed Noise handshake: whole application messages (CBOR bytes) in and
/// out, as encrypted frames (docs/NOISE.md). Used by the client's `Connection`, and by test hosts
/// for the responder side.
///
/// ### Invariants
/// - Messages go out in the order `send` was called, each one's frames contiguous: frames are
///   encrypted in call order and written through one chain, so nonces reach the peer in order.
/// - Anything malformed from the peer (a bad frame, a failed decryption) ends the link for good:
///   `receive` throws `badFrame` and the transport is closed. Nothing is skipped or repaired.
public actor SecureLink {
    public nonisolated let transport: any Transport
    /// The peer's static public key, authenticated by the handshake.
    public nonisolated let remoteStaticKey: [UInt8]
    private var encoder: SecureFrameEncoder
    private var decoder: SecureFrameDecoder
    private var lastSend: Task<Result<Void, RemoteError>, Never>?
    private var ended = false

    init(transport: any Transport, channel: consuming SecureChannel, buffered: [UInt8]) {
        self.transport = transport
        self.remoteStaticKey = channel.remoteStaticKey
        let codec = channel.frameCodec()
        self.encoder = codec.encoder
        self.decoder = codec.decoder
        decoder.append(buffered)
    }

    /// Encrypts and writes one application message.
    public func send(_ message: [UInt8]) async throws(RemoteError) {
        let frames: [UInt8]
        do throws(SecureFrameError) {
            frames = try encoder.encode(message)
        } catch {
            throw RemoteError(.badFrame, "cannot send: \(error.message)")
        }
        let previous = lastSend
        let transport = self.transport
        let task = Task<Result<Void, RemoteError>, Never> {
            _ = await previous?.value
            do throws(RemoteError) {
                try await transport.send(frames)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        lastSend = task
        try await task.value.get()
    }

    /// The next application message, or nil when the peer closed the stream cleanly between
    /// messages. One reader at a time.
    public func receive() async throws(RemoteError) -> [UInt8]? {
        while true {
            do throws(SecureFrameError) {
                if let message = try decoder.next() { return message }
            } catch {
                await close()
                throw RemoteError(.badFrame, error.description)
            }
            if ended { return nil }
            guard let chunk = try await transport.receive() else {
                ended = true
                do throws(SecureFrameError) {
                    try decoder.finish()
                } catch {
                    throw RemoteError(.closed, "the connection ended mid-message: \(error.message)")
                }
                return nil
            }
            decoder.append(chunk)
        }
    }

    public func close() async {
        ended = true
        await transport.close()
    }
}

/// Runs a Noise handshake over a transport, each handshake message framed with a 2-byte length.
public enum Handshake {
    /// Drives `state` to completion (either role) and returns the secure link. Bytes the peer sent
    /// after its last handshake message are kept for the link. A failure closes the transport.
    /// `received` holds bytes already read from the transport (a host that looked at the first
    /// message's length to choose the pattern).
    public static func perform(_ state: consuming HandshakeState, over transport: any Transport, received: [UInt8] = []) async throws(RemoteError) -> SecureLink {
        var state = state
        var splitter = SecureFrameSplitter(minimumFrameSize: 1)
        splitter.append(received)
        var message = 0
        do throws(RemoteError) {
            while true {
                switch state.step {
                case .write:
                    message += 1
                    let bytes: [UInt8]
                    do { bytes = try SecureFrames.frame(try state.writeMessage()) } catch {
                        throw RemoteError(.handshakeFailed, "handshake message \(message): \(error)")
                    }
                    try await transport.send(bytes)
                case .read:
                    message += 1
                    var next: [UInt8]?
                    while true {
                        do { next = try splitter.next() } catch {
                            throw RemoteError(.handshakeFailed, "handshake message \(message): \(error)")
                        }
                        if next != nil { break }
                        guard let chunk = try await transport.receive() else {
                            throw RemoteError(.closed, "the peer closed the connection before handshake message \(message)")
                        }
                        splitter.append(chunk)
                    }
                    do { _ = try state.readMessage(next!) } catch {
                        throw RemoteError(.handshakeFailed, "handshake message \(message): \(error)")
                    }
                case .complete:
                    let channel: SecureChannel
                    do { channel = try state.finish() } catch { throw RemoteError(.handshakeFailed, "\(error)") }
                    return SecureLink(transport: transport, channel: channel, buffered: splitter.takeBuffered())
                case .failed:
                    throw RemoteError(.handshakeFailed, "the handshake failed")
                }
            }
        } catch {
            await transport.close()
            throw error
        }
    }
}
