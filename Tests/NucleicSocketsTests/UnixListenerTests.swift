import Glibc
@testable import NucleicSockets
import Testing

/// UnixListener on real sockets in temp folders: permissions, stale and live sockets, closing.
/// The time limit only guards against hangs; no assertion depends on timing.
@Suite(.timeLimit(.minutes(2)))
struct UnixListenerTests {
    @Test func createsAPrivateFolderAndAPrivateSocket() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/home/run/nucleic.sock"
        // Whatever the umask, the socket is 0600 and the folders 0700.
        let saved = umask(0)
        let listener: UnixListener
        do {
            defer { umask(saved) }
            listener = try UnixListener(path: path)
        }
        defer { listener.close() }
        #expect(fileType(of: path) == S_IFSOCK)
        #expect(mode(of: path) == 0o600)
        #expect(mode(of: tmp + "/home/run") == 0o700)
        #expect(mode(of: tmp + "/home") == 0o700)
        #expect(mode(of: path + ".lock") == 0o600)
    }

    @Test func refusesAFolderWritableByOthers() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        #expect(mkdir(tmp + "/run", 0o700) == 0)
        #expect(chmod(tmp + "/run", 0o777) == 0)
        let error = #expect(throws: SocketError.self) { try UnixListener(path: tmp + "/run/nucleic.sock") }
        #expect(error?.code == .unsafeDirectory)
        #expect(!exists(tmp + "/run/nucleic.sock"))
    }

    @Test func replacesAStaleSocket() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        makeStaleSocket(at: path)
        #expect(fileType(of: path) == S_IFSOCK)
        // The CLI sees "not running" on a stale socket.
        let refused = socketError { _ = try UnixClient.connect(path: path) }
        #expect(refused?.code == .notRunning)

        let listener = try UnixListener(path: path)
        defer { listener.close() }
        let echo = startEchoServer(listener)
        let client = try UnixClient.connect(path: path)
        try await client.send([1, 2, 3])
        #expect(await client.frames.first { _ in true } == [1, 2, 3])
        listener.close()
        await echo.value
    }

    @Test func refusesASecondListenerOnALivePath() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        let first = try UnixListener(path: path)
        let error = #expect(throws: SocketError.self) { try UnixListener(path: path) }
        #expect(error?.code == .alreadyRunning)
        #expect(error?.message.hasPrefix("a daemon is already running at \(path) (") == true)
        // The live socket was left alone and still answers.
        let echo = startEchoServer(first)
        let client = try UnixClient.connect(path: path)
        try await client.send([7])
        #expect(await client.frames.first { _ in true } == [7])
        first.close()
        await echo.value
        // Once the first is closed, the path is free again.
        let second = try UnixListener(path: path)
        second.close()
    }

    @Test func refusesALiveSocketThatHoldsNoLock() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        let raw = makeRawListener(at: path)
        defer { close(raw) }
        let error = #expect(throws: SocketError.self) { try UnixListener(path: path) }
        #expect(error?.code == .alreadyRunning)
        #expect(error?.message.contains("something answered on the socket") == true)
        #expect(fileType(of: path) == S_IFSOCK)
    }

    @Test func leavesSomethingThatIsNotASocketAlone() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        writeFile(path, "precious")
        let error = #expect(throws: SocketError.self) { try UnixListener(path: path) }
        #expect(error?.code == .notASocket)
        #expect(fileType(of: path) == S_IFREG)
    }

    @Test func refusesAPathTooLongForASocket() {
        let path = "/tmp/" + String(repeating: "p", count: 120) + "/nucleic.sock"
        let error = #expect(throws: SocketError.self) { try UnixListener(path: path) }
        #expect(error?.code == .pathTooLong)
    }

    @Test func closingUnlinksTheSocketAndEndsTheAcceptThread() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        for round in 0..<200 {
            let listener = try UnixListener(path: path)
            #expect(fileType(of: path) == S_IFSOCK)
            var client: LocalConnection?
            if round % 4 == 0 { client = try UnixClient.connect(path: path) }
            listener.close()
            #expect(listener.isClosed)
            // Unlinked by close() itself, before the thread has even woken up.
            #expect(!exists(path))
            // `connections` finishes only as the accept thread's last act, after it closed the
            // listening socket: the loop ends only if no accept thread is left blocked.
            var accepted: [LocalConnection] = []
            for await connection in listener.connections { accepted.append(connection) }
            #expect(accepted.count <= 1)
            #expect(listener.failure == nil)
            for connection in accepted {
                connection.close()
                // ended() returns once the connection's thread has closed its socket.
                #expect(await connection.ended().code == .closed)
            }
            client?.close()
            // The client may have seen the server side go first.
            if let client { #expect([.closed, .peerClosed].contains(await client.ended().code)) }
        }
    }

    @Test func listensAtTheTmpFallbackForALongHome() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let home = tmp + "/" + String(repeating: "h", count: 100)
        let path = try SocketPath.resolve(home: home, runtimeDirectory: nil, temporaryDirectory: tmp)
        #expect(path != SocketPath.preferred(home: home))
        let listener = try UnixListener(path: path)
        let echo = startEchoServer(listener)
        let client = try UnixClient.connect(path: try SocketPath.resolve(home: home, runtimeDirectory: nil, temporaryDirectory: tmp))
        try await client.send([4, 2])
        #expect(await client.frames.first { _ in true } == [4, 2])
        #expect(mode(of: path) == 0o600)
        #expect(mode(of: parentPath(of: path)) == 0o700)
        listener.close()
        await echo.value
    }

    @Test func closingDoesNotUnlinkASuccessorsSocket() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        let first = try UnixListener(path: path)
        // Someone removed our socket and another process put its own there.
        #expect(unlink(path) == 0)
        let raw = makeRawListener(at: path)
        defer { close(raw) }
        first.close()
        #expect(fileType(of: path) == S_IFSOCK)
    }

    @Test func runServesUntilClosedThenClosesItsConnections() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        let listener = try UnixListener(path: path)
        let echo = startEchoServer(listener)
        let client = try UnixClient.connect(path: path)
        try await client.send(Array("ping".utf8))
        var frames = client.frames.makeAsyncIterator()
        #expect(await frames.next() == Array("ping".utf8))
        listener.close()
        // run() closes the connection it was serving, then returns.
        #expect(await frames.next() == nil)
        #expect(client.endReason?.code == .peerClosed)
        await echo.value
        #expect(!exists(path))
    }

    @Test func cancellingRunClosesTheListener() async throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let path = tmp + "/nucleic.sock"
        let listener = try UnixListener(path: path)
        let echo = startEchoServer(listener)
        let client = try UnixClient.connect(path: path)
        try await client.send([1])
        #expect(await client.frames.first { _ in true } == [1])
        echo.cancel()
        await echo.value
        #expect(listener.isClosed)
        #expect(!exists(path))
        #expect(await client.ended().code == .peerClosed)
    }
}
