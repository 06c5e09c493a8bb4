import Foundation

/// A local APNs provider API (Tests/Peers/apns_server.py on the push peers' Python): HTTP/2 over
/// TLS with a CA it makes at start (`caFile`), checking each request's headers and verifying its
/// provider token with PyJWT against the public half of the `.p8` key it is given.
public final class APNsServerPeer: Sendable {
    let peer: PeerProcess
    public let port: Int
    public var log: String { peer.folder + "/requests.jsonl" }
    public var caFile: String { peer.folder + "/ca.pem" }
    public var base: String { "https://127.0.0.1:\(port)" }

    public init(teamID: String, keyID: String, topic: String, keyFile: String) throws {
        guard let python = PushServicePeer.python else { throw PushServicePeer.Missing() }
        peer = try PeerProcess("apns", python: python, script: "apns_server.py") { [$0, teamID, keyID, topic, keyFile] }
        port = try peer.readyPort()
    }

    /// For failure messages: whether the peer still runs, and its stderr.
    public var diagnosis: String { peer.diagnosis }

    /// The requests so far, oldest first.
    public func requests() throws -> [[String: Any]] { try peer.jsonLines("requests.jsonl") }

    public func stop() { peer.stop() }
}
