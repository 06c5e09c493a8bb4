import Foundation

/// A local HTTP endpoint (Tests/Peers/http_sink.py, Python's own http.server and hmac) that
/// records every request it gets, for the notifier's HTTP channels.
public final class HTTPSink: Sendable {
    let peer: PeerProcess
    /// The port it listens on, as text (it goes into URLs).
    public var port: String { peer.readyLine.trimmingCharacters(in: .whitespaces) }
    public var log: String { peer.folder + "/requests.jsonl" }

    public init(secret: String) throws {
        peer = try PeerProcess("http", python: "/usr/bin/python3", script: "http_sink.py") { [$0 + "/requests.jsonl", secret] }
    }

    public func requests() throws -> [[String: Any]] { try peer.jsonLines("requests.jsonl") }

    public func stop() { peer.stop() }
}
