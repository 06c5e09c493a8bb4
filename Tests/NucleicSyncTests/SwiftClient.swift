import NucleicProtocol
import NucleicWire
@testable import NucleicSync
import NucleicSockets
import NucleicTestSupport

/// A minimal device written in Swift on NucleicWire (the Python client is the independent one):
/// pairs or connects, then sends and receives application messages. `chunk` cuts every write into
/// pieces of that many bytes (1: byte by byte), each written separately.
final class SwiftClient: @unchecked Sendable {  // used by one test task at a time
    let tcp: TCPConnection
    var encoder: SecureFrameEncoder
    var decoder: SecureFrameDecoder
    var chunk: Int?
    let deviceKey: NoiseKeyPair

    private init(tcp: TCPConnection, channel: consuming SecureChannel, leftover: [UInt8], deviceKey: NoiseKeyPair) {
        self.tcp = tcp
        let codec = channel.frameCodec()
        encoder = codec.encoder
        decoder = codec.decoder
        decoder.append(leftover)
        self.deviceKey = deviceKey
    }

    /// Pairs with the invite in `uri` (XXpsk3, the host key pinned from the URI).
    static func pair(uri text: String, deviceKey: NoiseKeyPair = .generate(), chunk: Int? = nil) async throws -> SwiftClient {
        let uri = try PairingURI(parsing: text)
        let address = uri.addresses[0]
        let colon = address.lastIndex(of: ":")!
        let tcp = try TCPConnection.connect(host: String(address[..<colon]), port: Int(address[address.index(after: colon)...])!)
        var handshake = try HandshakeState(pattern: .xxpsk3, role: .initiator, localStatic: deviceKey, remoteStatic: uri.hostKey,
                                           psk: SecretBytes(copying: uri.psk))
        var splitter = SecureFrameSplitter()
        try await write(tcp, SecureFrames.frame(handshake.writeMessage()), chunk: chunk)
        _ = try handshake.readMessage(try await next(&splitter, tcp))
        try await write(tcp, SecureFrames.frame(handshake.writeMessage()), chunk: chunk)
        let client = SwiftClient(tcp: tcp, channel: try handshake.finish(), leftover: splitter.takeBuffered(), deviceKey: deviceKey)
        client.chunk = chunk
        return client
    }

    /// Connects with IK as a paired device.
    static func connect(port: Int, hostKey: [UInt8], deviceKey: NoiseKeyPair, chunk: Int? = nil) async throws -> SwiftClient {
        let tcp = try TCPConnection.connect(host: "127.0.0.1", port: port)
        var handshake = try HandshakeState(pattern: .ik, role: .initiator, localStatic: deviceKey, remoteStatic: hostKey)
        var splitter = SecureFrameSplitter()
        try await write(tcp, SecureFrames.frame(handshake.writeMessage()), chunk: chunk)
        _ = try handshake.readMessage(try await next(&splitter, tcp))
        let client = SwiftClient(tcp: tcp, channel: try handshake.finish(), leftover: splitter.takeBuffered(), deviceKey: deviceKey)
        client.chunk = chunk
        return client
    }

    static func write(_ tcp: TCPConnection, _ bytes: [UInt8], chunk: Int?) async throws {
        guard let chunk else { return try await tcp.send(bytes) }
        var index = 0
        while index < bytes.count {
            let end = min(bytes.count, index + chunk)
            try await tcp.send(Array(bytes[index..<end]))
            index = end
        }
    }

    static func next(_ splitter: inout SecureFrameSplitter, _ tcp: TCPConnection) async throws -> [UInt8] {
        while true {
            if let message = try splitter.next() { return message }
            guard let bytes = await tcp.read() else { throw PeerFailure("the host closed during the handshake") }
            splitter.append(bytes)
        }
    }

    func send(_ message: ClientMsg) async throws {
        try await Self.write(tcp, encoder.encode(WireMessages.encode(message)), chunk: chunk)
    }

    /// Sends `payload` as one application message, whatever it holds (tests of bad input).
    func send(payload: [UInt8]) async throws {
        try await Self.write(tcp, encoder.encode(payload), chunk: chunk)
    }

    /// The next host message, nil once the host closed.
    func next() async throws -> HostMsg? {
        while true {
            if let bytes = try decoder.next() { return try WireMessages.decodeHost(bytes) }
            guard let chunk = await tcp.read() else { return nil }
            decoder.append(chunk)
        }
    }

    /// Reads until a message matching `predicate`.
    func until(_ predicate: (HostMsg) -> Bool) async throws -> HostMsg {
        while let message = try await next() {
            if predicate(message) { return message }
        }
        throw PeerFailure("the host closed first")
    }

    func hello(label: String? = nil) async throws -> HostMsg {
        try await send(ClientMsg(.hello(protocolVersion: 1, client: "swift-test", label: label), requestID: 1))
        guard let reply = try await next() else { throw PeerFailure("closed instead of welcome") }
        return reply
    }

    func close() { tcp.close() }
}
