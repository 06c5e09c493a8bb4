import Foundation

/// A local Web Push service and subscriber (Tests/Peers/push_service.py on the push peers'
/// Python, `NUCLEIC_PUSH_PYTHON`): its subscription (endpoint base, `p256dh`, `auth`), and every
/// request it got with its VAPID check (py_vapid) and decrypted body (http_ece).
public final class PushServicePeer: Sendable {
    public static var python: String? {
        guard let path = ProcessInfo.processInfo.environment["NUCLEIC_PUSH_PYTHON"], FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }
    /// Whether the tests run where the peer is required (CI=true): then its absence fails them.
    public static var isRequired: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    public struct Missing: Error, CustomStringConvertible {
        public var description: String { "NUCLEIC_PUSH_PYTHON is not set or not executable: run `eval \"$(scripts/peers.sh)\"` first" }
    }

    let peer: PeerProcess
    public let port: Int
    /// base64url, as a browser's PushSubscription gives them.
    public let p256dh: String
    public let auth: String
    public var log: String { peer.folder + "/requests.jsonl" }
    public var base: String { "http://127.0.0.1:\(port)" }

    public init() throws {
        guard let python = Self.python else { throw Missing() }
        peer = try PeerProcess("push", python: python, script: "push_service.py") { [$0 + "/requests.jsonl"] }
        port = try peer.readyPort()
        let ready = peer.readyObject
        p256dh = ready["p256dh"] as? String ?? ""
        auth = ready["auth"] as? String ?? ""
    }

    /// For failure messages: whether the peer still runs, and its stderr.
    public var diagnosis: String { peer.diagnosis }

    /// The requests so far, oldest first.
    public func requests() throws -> [[String: Any]] { try peer.jsonLines("requests.jsonl") }

    /// Waits until at least `count` requests came (or `seconds` passed); the requests.
    public func waitForRequests(_ count: Int, seconds: Double = 20) async throws -> [[String: Any]] {
        try await peer.waitForJSONLines("requests.jsonl", count, seconds: seconds)
    }

    public func stop() { peer.stop() }
}
