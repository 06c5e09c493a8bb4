import Glibc
@testable import NucleicSockets
import Testing

/// Every reply a server decides to send before closing reaches the peer: a handler that returns
/// right after queueing, a listener closed while replies wait, a peer whose unread input would
/// make the kernel reset a plain close. A peer that never reads is cut off after the grace.
/// The time limit only guards against hangs; no assertion depends on timing.
@Suite(.timeLimit(.minutes(2)))
struct CloseAfterFlushTests {
    @Test func whatAHandlerQueuedBeforeReturningIsReadWholeByThePeer() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let listener = try UnixListener(path: tmp + "/s.sock")
        // Eight frames of 1 MiB: more than the socket buffer holds, so most are still queued
        // when the handler returns.
        let replies = (0..<8).map { randomBytes(1 << 20, seed: UInt64($0)) }
        let server = Task {
            await listener.run { connection in
                for reply in replies { try? connection.enqueue(reply) }
            }
        }
        let client = try UnixClient.connect(path: tmp + "/s.sock")
        #expect(await collectFrames(client) == replies)
        #expect(client.endReason?.code == .peerClosed)
        listener.close()
        await server.value
    }

    @Test func closingTheListenerWritesTheRepliesAlreadyQueued() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        // The shape of `stop-daemon`: the reply is queued, then the listener is closed at once.
        for round in 0..<50 {
            let listener = try UnixListener(path: tmp + "/s.sock")
            let server = Task {
                await listener.run { connection in
                    for await frame in connection.frames {
                        try? connection.enqueue(frame + [UInt8(round % 256)])
                        listener.close()
                    }
                }
            }
            let client = try UnixClient.connect(path: tmp + "/s.sock")
            try await client.send(Array("stop".utf8))
            #expect(await collectFrames(client) == [Array("stop".utf8) + [UInt8(round % 256)]], "round \(round)")
            await server.value
        }
    }

    @Test func sendsAfterTheCloseAreRefusedAndFramesEndAtOnce() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let listener = try UnixListener(path: tmp + "/s.sock")
        defer { listener.close() }
        let client = try UnixClient.connect(path: tmp + "/s.sock")
        let accepted = try #require(await firstConnection(of: listener))
        try await client.send([1])
        try accepted.enqueue([2])
        accepted.closeAfterFlush()
        #expect(await socketError { try accepted.enqueue([3]) }?.code == .closed)
        // Frames the peer sent are dropped once the close is decided.
        #expect(await collectFrames(accepted) == [])
        #expect(await collectFrames(client) == [[2]])
        #expect(await accepted.ended().code == .closed)
    }

    @Test func aPeerThatNeverReadsIsClosedAfterTheGraceSayingWhatWasDropped() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let listener = try UnixListener(path: tmp + "/s.sock")
        defer { listener.close() }
        let client = try UnixClient.connect(path: tmp + "/s.sock")
        let accepted = try #require(await firstConnection(of: listener))
        for index in 0..<16 { try accepted.enqueue(randomBytes(1 << 20, seed: UInt64(index))) }
        accepted.closeAfterFlush(grace: .milliseconds(100))
        let reason = await accepted.ended()
        #expect(reason.code == .closed)
        #expect(reason.message.contains("bytes the peer did not read in time were dropped"))
        client.close()
    }

    @Test func aTCPReplyArrivesThoughThePeersLastBytesWereNeverRead() async throws {
        let listener = try TCPListener(host: "127.0.0.1", port: 0)
        defer { listener.close() }
        let client = try TCPConnection.connect(host: "127.0.0.1", port: listener.port)
        var accepted: TCPConnection?
        for await connection in listener.connections { accepted = connection; break }
        let server = try #require(accepted)
        let reply = randomBytes(512 * 1024, seed: 8)
        try server.enqueue(reply)
        server.closeAfterFlush("done")
        // The peer goes on sending after the close was decided: a plain close with that input
        // unread makes the kernel reset the connection, which can destroy the reply unread. (The
        // peer's own connection ends when it reads the end, so its send may be cut short.)
        try? client.enqueue(randomBytes(256 * 1024, seed: 7))
        var received: [UInt8] = []
        while let chunk = await client.read() { received += chunk }
        #expect(received == reply)
        #expect(client.endReason?.code == .peerClosed)
        client.close()
        #expect(await server.ended().message.contains("done"))
    }
}
