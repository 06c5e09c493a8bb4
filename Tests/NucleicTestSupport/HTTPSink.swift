import Foundation

/// A local HTTP endpoint (Tests/Peers/http_sink.py, Python's own http.server and hmac) that
/// records every request it gets, for the notifier's HTTP channels.
public final class HTTPSink: Sendable {
    let peer: PeerProcess
    /// The port it listens on, as text (it goes into URLs).
    public let port: String
    public var log: String { peer.folder + "/requests.jsonl" }

    public init(secret: String) throws {
        peer = try PeerProcess("http", python: "/usr/bin/python3", script: "http_sink.py") { [$0 + "/requests.jsonl", secret] }
        port = String(try peer.readyPort())
    }

    /// For failure messages: whether the peer still runs, and its stderr.
    public var diagnosis: String { peer.diagnosis }

    public func requests() throws -> [[String: Any]] { try peer.jsonLines("requests.jsonl") }

    public func stop() { peer.stop() }
}
