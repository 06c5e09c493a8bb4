import Glibc
@testable import NucleicSockets
import Testing
import NucleicTestSupport

/// Connections over real Unix sockets: round trips, many clients, credentials, broken peers,
/// backpressure. The time limit only guards against hangs; no assertion depends on timing.
@Suite(.timeLimit(.minutes(3)))
struct ConnectionTests {
    /// A listener in a fresh temp folder; `body` gets it and its path; everything is removed after.
    private func withListener(
        options: ConnectionOptions = ConnectionOptions(),
        _ body: (UnixListener, String) async throws -> Void
    ) async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/run/nucleic.sock"
        let listener = try UnixListener(path: path, options: options)
        defer { listener.close() }
        try await body(listener, path)
    }

    @Test func echoesAThousandFramesOfRandomSizesBothWaysAtOnce() async throws {
        try await withListener { listener, path in
            let echo = startEchoServer(listener)
            let pool = randomBytes(2 << 20, seed: 99)
            var generator = SeededGenerator(seed: 7)
            // Half up to 1 MiB, half tiny, so reads see both frames split over many reads and many
            // frames in one read.
            let frames = (0..<1000).map { index -> (offset: Int, count: Int) in
                let count = index % 2 == 0 ? Int.random(in: 0...(1 << 20), using: &generator) : Int.random(in: 0...300, using: &generator)
                return (Int.random(in: 0...(1 << 20), using: &generator), count)
            }
            let client = try UnixClient.connect(path: path)
            // The echoes are read while the frames are still being sent.
            async let mismatches: Int = {
                var index = 0
                var bad = 0
                for await frame in client.frames {
                    if !matches(frame, pool, offset: frames[index].offset, count: frames[index].count) { bad += 1 }
                    index += 1
                    if index == frames.count { break }
                }
                // Ended early (the test's time limit cancelled it): close, so the sends still
                // waiting for the echo server to read end with `closed` instead of waiting forever.
                if index < frames.count { client.close() }
                return bad + (frames.count - index)
            }()
            for frame in frames {
                try await client.send(Array(pool[frame.offset..<(frame.offset + frame.count)]))
            }
            #expect(await mismatches == 0)
            client.close()
            listener.close()
            await echo.value
        }
    }

    @Test func servesFiftyClientsAtOnce() async throws {
        try await withListener { listener, path in
            let echo = startEchoServer(listener)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for clientIndex in 0..<50 {
                    group.addTask {
                        let client = try UnixClient.connect(path: path)
                        var generator = SeededGenerator(seed: UInt64(clientIndex))
                        let payloads = (0..<40).map { frame in
                            randomBytes(Int.random(in: 0...65_536, using: &generator), seed: UInt64(clientIndex * 1000 + frame))
                        }
                        async let echoed: [[UInt8]] = {
                            var frames: [[UInt8]] = []
                            for await frame in client.frames {
                                frames.append(frame)
                                if frames.count == payloads.count { break }
                            }
                            return frames
                        }()
                        for payload in payloads { try await client.send(payload) }
                        let received = await echoed
                        client.close()
                        return received == payloads ? 1 : 0
                    }
                }
                var good = 0
                for try await result in group { good += result }
                #expect(good == 50)
            }
            listener.close()
            await echo.value
        }
    }

    @Test func exposesThePeersCredentialsOnBothSides() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path)
            let server = try #require(await firstConnection(of: listener))
            #expect(server.peer.uid == getuid())
            #expect(server.peer.gid == getgid())
            #expect(server.peer.pid == getpid())
            #expect(client.peer.uid == getuid())
            #expect(client.peer.pid == getpid())
            #expect(server.label == "the connection from pid \(getpid()) (uid \(getuid()))")
            #expect(client.label == "the connection to the daemon at \(path)")
            client.close()
            server.close()
        }
    }

    @Test func connectingWhereNothingListensSaysTheDaemonIsNotRunning() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let missing = tmp + "/run/nucleic.sock"
        let error = socketError { _ = try UnixClient.connect(path: missing) }
        #expect(error?.code == .notRunning)
        #expect(error?.message.hasPrefix("the daemon is not running at \(missing): there is no socket there") == true)

        let stale = tmp + "/stale.sock"
        makeStaleSocket(at: stale)
        let refused = socketError { _ = try UnixClient.connect(path: stale) }
        #expect(refused?.code == .notRunning)
        #expect(refused?.message.hasPrefix("the daemon is not running at \(stale): nothing is listening") == true)
    }

    @Test func aPeerClosingInsideAFrameEndsTheConnectionWithAReason() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path)
            let server = try #require(await firstConnection(of: listener))
            // One whole frame, then a header announcing 100 bytes and only 10 of them.
            try await client.send([1, 2, 3])
            try await client.sendRaw(FrameEncoder.header(length: 100) + Array(repeating: 9, count: 10))
            client.close()
            #expect(await collectFrames(server) == [[1, 2, 3]])
            let reason = try #require(server.endReason)
            #expect(reason.code == .truncatedFrame)
            #expect(reason.message.contains("in the middle of a frame: 10 of its 100 payload bytes had arrived"))
            // Sending on it now fails with that reason.
            let error = await socketError { try await server.send([1]) }
            #expect(error?.code == .truncatedFrame)
        }
    }

    @Test func aFrameOverTheLimitClosesTheConnection() async throws {
        try await withListener(options: ConnectionOptions(maxPayload: 1024)) { listener, path in
            let client = try UnixClient.connect(path: path)
            let server = try #require(await firstConnection(of: listener))
            try await client.send([42])
            try await client.send(Array(repeating: 0, count: 1025))
            #expect(await collectFrames(server) == [[42]])
            #expect(server.endReason?.code == .frameTooLarge)
            #expect(server.endReason?.message.contains("a frame announced a payload of 1025 bytes, over the limit of 1024 bytes") == true)
            // The client sees the daemon hang up.
            #expect(await client.ended().code == .peerClosed)
        }
    }

    @Test func refusesToSendAPayloadOverTheLimitAndStaysOpen() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path, options: ConnectionOptions(maxPayload: 10))
            let server = try #require(await firstConnection(of: listener))
            let error = await socketError { try await client.send(Array(repeating: 1, count: 11)) }
            #expect(error?.code == .payloadTooLarge)
            #expect(client.isOpen)
            try await client.send([2])
            #expect(await server.frames.first { _ in true } == [2])
            client.close()
        }
    }

    @Test func sendingToAClosedPeerThrowsWithoutSIGPIPE() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path)
            let server = try #require(await firstConnection(of: listener))
            server.close()
            #expect(server.endReason?.code == .closed)
            #expect(await client.ended().code == .peerClosed)
            let error = await socketError { try await client.send([1]) }
            #expect(error?.code == .peerClosed)
            #expect(error?.message == "cannot send: the connection to the daemon at \(path) was closed by the peer")
            #expect(throws: SocketError.self) { try client.enqueue([1]) }
            // Sending on the side that closed fails too.
            #expect(await socketError { try await server.send([1]) }?.code == .closed)
        }
    }

    @Test func aWriteToAPeerThatHasGoneFailsWithEPIPE() async throws {
        // The server stops reading once one frame waits for its consumer, so it does not see the
        // client's EOF; its write is what finds the peer gone. With SIGPIPE at its default
        // disposition this would kill the test process unless MSG_NOSIGNAL is used.
        try await withListener(options: ConnectionOptions(maxBufferedIncomingBytes: 1)) { listener, path in
            let client = try UnixClient.connect(path: path)
            let server = try #require(await firstConnection(of: listener))
            try await client.send(Array(repeating: 5, count: 100))
            client.close()
            // ended() returns once the client's socket is really closed.
            #expect(await client.ended().code == .closed)
            let error = await socketError { try await server.send(Array(repeating: 6, count: 4096)) }
            #expect(error?.code == .peerClosed)
            #expect(error?.errno == EPIPE)
            #expect(server.endReason?.message == "the connection from pid \(getpid()) (uid \(getuid())) was closed by the peer before everything sent was written")
            // The frame that arrived before is still delivered.
            #expect(await collectFrames(server) == [Array(repeating: 5, count: 100)])
        }
    }

    @Test func aPeerThatDoesNotReadIsDisconnectedAsTooSlow() async throws {
        let limits = ConnectionOptions(maxPayload: 65_536, maxQueuedOutgoingBytes: 262_144)
        try await withListener(options: limits) { listener, path in
            let client = try UnixClient.connect(path: path, options: ConnectionOptions(maxBufferedIncomingBytes: 65_536))
            let server = try #require(await firstConnection(of: listener))
            let payload = Array(repeating: UInt8(3), count: 65_536)
            var queued = 0
            var failure: SocketError?
            // The client reads nothing: the socket buffers, the client's 64 KiB, then the server's
            // 256 KiB queue fill up. Each enqueue returns at once; one of them must fail.
            while failure == nil, queued < 100_000 {
                do { try server.enqueue(payload); queued += 1 } catch { failure = error as? SocketError }
            }
            #expect(failure?.code == .tooSlow)
            #expect(server.endReason?.code == .tooSlow)
            #expect(server.endReason?.message.contains("was closed because the peer is not reading") == true)
            // The client gets what was written, then the end (possibly inside the frame that was
            // being written when the queue was dropped).
            let frames = await collectFrames(client)
            #expect(frames.allSatisfy { $0 == payload })
            #expect([.peerClosed, .truncatedFrame].contains(client.endReason?.code))
        }
    }

    @Test func closingWakesASendWaitingForASlowPeer() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path, options: ConnectionOptions(maxBufferedIncomingBytes: 65_536))
            let server = try #require(await firstConnection(of: listener))
            let payload = Array(repeating: UInt8(8), count: 1 << 20)
            // Sends until one waits on the full socket; close() then makes it (or the next) fail.
            let sender = Task { () -> SocketError? in
                while true {
                    do { try await server.send(payload) } catch { return error as? SocketError }
                }
            }
            // Wait until the server's sends have filled the client's buffer (the client's reading
            // paused); the sender is blocked then or soon after. Either way close() must end it.
            var frames = client.frames.makeAsyncIterator()
            #expect(await frames.next() == payload)
            server.close()
            #expect(await sender.value?.code == .closed)
            #expect(await server.ended().code == .closed)
            client.close()
        }
    }

    @Test func cancellingAReaderEndsItsStreamButNotTheConnection() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path)
            let server = try #require(await firstConnection(of: listener))
            let reader = Task { await collectFrames(server) }
            reader.cancel()
            #expect(await reader.value == [])
            #expect(server.isOpen)
            try await client.send([1])
            #expect(await server.frames.first { _ in true } == [1])
            client.close()
            server.close()
        }
    }

    @Test func droppingAConnectionClosesIt() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path)
            do {
                let server = try #require(await firstConnection(of: listener))
                #expect(server.isOpen)
            }
            #expect(await client.ended().code == .peerClosed)
        }
    }

    @Test func framesFromOneSideArriveInOrderWhileTheOtherSendsToo() async throws {
        try await withListener { listener, path in
            let client = try UnixClient.connect(path: path)
            let server = try #require(await firstConnection(of: listener))
            let count = 2000
            func payload(_ index: Int, _ side: UInt8) -> [UInt8] { [side] + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init) + Array(repeating: side, count: index % 5000) }
            async let serverSent: Void = { for index in 0..<count { try server.enqueue(payload(index, 1)); if index % 100 == 0 { await Task.yield() } } }()
            async let clientSent: Void = { for index in 0..<count { try await client.send(payload(index, 2)) } }()
            async let atClient: [[UInt8]] = { var all: [[UInt8]] = []; for await frame in client.frames { all.append(frame); if all.count == count { break } }; return all }()
            async let atServer: [[UInt8]] = { var all: [[UInt8]] = []; for await frame in server.frames { all.append(frame); if all.count == count { break } }; return all }()
            try await serverSent
            try await clientSent
            #expect(await atClient == (0..<count).map { payload($0, 1) })
            #expect(await atServer == (0..<count).map { payload($0, 2) })
            client.close()
            server.close()
        }
    }
}
