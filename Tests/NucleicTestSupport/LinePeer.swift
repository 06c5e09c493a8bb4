import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The pinned test peers' Python (`NUCLEIC_PEERS_PYTHON`, set by `eval "$(scripts/peers.sh)"`):
/// cbor2, noiseprotocol and the remote client run on it.
public enum PeerPython {
    public static var path: String? {
        guard let path = ProcessInfo.processInfo.environment["NUCLEIC_PEERS_PYTHON"], FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }
    /// CI must prove interop: there a missing peer fails the test instead of skipping it.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }
    public static let missing = "NUCLEIC_PEERS_PYTHON is not set or not executable: run `eval \"$(scripts/peers.sh)\"` first (CI=true requires the peer)"
}

/// What a peer did wrong, or that it is missing; the message says which and shows its stderr.
public struct PeerFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A script of Tests/Peers spoken to one line at a time over pipes: lines in on its stdin, lines
/// out of its stdout, its stderr kept in a file for the failure messages.
///
/// A hung peer must not hang the test run: after `watchdog` seconds it is killed (SIGKILL, which
/// no inherited signal mask blocks), which ends a waiting `receive` with EOF. The watchdog is
/// called off when the peer is closed or freed, and signals through the peer's
/// `ProcessIdentity`: by the time it fires the pid may name another test's process. The calls
/// block, so a caller on the cooperative pool hops to a Dispatch thread for them (as
/// `RemoteClientPeer`).
public final class LinePeer: @unchecked Sendable {  // used by one caller at a time
    public let name: String
    private let process = Process()
    private let input: FileHandle
    private let output: FileHandle
    private let errors: URL
    private var buffered: [UInt8] = []
    private let identity: ProcessIdentity?
    private let watchdog: DispatchWorkItem

    public init(_ script: String, arguments: [String] = [], watchdog: Double = 60) throws {
        guard let python = PeerPython.path else { throw PeerFailure(PeerPython.missing) }
        name = script
        errors = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-peer-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        let stdin = Pipe()
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [Fixture.root.deletingLastPathComponent().appendingPathComponent("Tests/Peers/\(script)").path] + arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        let identity = ProcessIdentity(process.processIdentifier)
        self.identity = identity
        self.watchdog = DispatchWorkItem { identity?.signal(SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + watchdog, execute: self.watchdog)
    }

    public func send(_ line: String) throws {
        try input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The next line, without its newline; throws with the peer's stderr when it ended instead.
    public func receive() throws -> String {
        while true {
            if let newline = buffered.firstIndex(of: 0x0a) {
                let line = String(decoding: buffered[..<newline], as: UTF8.self)
                buffered.removeSubrange(...newline)
                return line
            }
            let data = output.availableData
            guard !data.isEmpty else { throw PeerFailure("\(name) ended: \(stderr())") }
            buffered += data
        }
    }

    /// Sends a JSON object as one line and returns the JSON object of the next line.
    public func call(_ object: [String: Any]) throws -> [String: Any] {
        try send(String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        let line = try receive()
        guard let answer = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw PeerFailure("\(name) answered something other than a JSON object: \(line.prefix(200))")
        }
        return answer
    }

    public func stderr() -> String { (try? String(contentsOf: errors, encoding: .utf8)) ?? "" }

    /// Ends its input (after `last`, a line asking it to quit, when given) and waits for it.
    public func close(saying last: String? = nil) {
        if let last { try? send(last) }
        try? input.close()
        process.waitUntilExit()
        watchdog.cancel()
    }

    deinit {
        watchdog.cancel()
        if process.isRunning { identity?.signal(SIGKILL) }
        try? FileManager.default.removeItem(at: errors)
    }
}
