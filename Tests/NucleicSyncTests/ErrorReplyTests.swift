import Foundation
import NucleicProtocol
import NucleicSockets
import NucleicTestSupport
import NucleicWire
import Testing
@testable import NucleicSync

/// Every error answering a client message carries that message's `requestID`, whatever was
/// wrong with it (docs/PROTOCOL.md): a client matching replies by id never waits forever, which
/// matters most when a newer client talks to an older host.
@Suite(.serialized) struct ErrorReplyTests {
    /// Frames that are not valid messages, each with the requestID it carries and the error code
    /// the host answers with.
    static let badFrames: [(what: String, message: JSONValue, code: HostMsg.ErrorCode)] = [
        ("an unknown type", ["type": "teleport", "requestID": 11], .unknownType),
        ("a missing field", ["type": "approvalRespond", "requestID": 12], .badMessage),
        ("a mistyped field", ["type": "subscribe", "sessionID": 42, "requestID": 13], .badMessage),
        ("a mistyped optional field", ["type": "listSessions", "includeArchived": "yes", "requestID": 14], .badMessage),
        ("an unknown decision", ["type": "approvalRespond", "approvalID": "x", "decision": ["kind": "maybe"], "requestID": 15], .badMessage),
    ]

    @Test func everyErrorOnTheLocalSocketCarriesTheRequestID() async throws {
        try await RemoteRig.with { rig in
            let client = try UnixClient.connect(path: rig.root + "/s.sock")
            defer { client.close() }
            var replies = client.frames.makeAsyncIterator()
            for bad in Self.badFrames {
                try await client.send(CBOREncoder.encode(CBORValue(bad.message)))
                let reply = try WireMessages.decodeHost(try #require(await replies.next()))
                #expect(reply.requestID == bad.message["requestID"]?.intValue, "\(bad.what): \(reply)")
                guard case .error(let code, _, _) = reply.body else { Issue.record("\(bad.what): \(reply)"); continue }
                #expect(code == bad.code, "\(bad.what)")
            }
            // A frame that is not CBOR has no requestID to copy; the error still comes, and the
            // connection goes on serving.
            try await client.send([0xff, 0x00])
            let garbage = try WireMessages.decodeHost(try #require(await replies.next()))
            #expect(garbage.requestID == nil)
            try await client.send(WireMessages.encode(ClientMsg(.ping, requestID: 99)))
            #expect(try WireMessages.decodeHost(try #require(await replies.next())) == HostMsg(.pong, requestID: 99))
        }
    }

    @Test func everyErrorOverTheNoiseLinkCarriesTheRequestID() async throws {
        try await RemoteRig.with { rig in
            // A first message that is not a valid hello is refused with its requestID.
            let invite = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
            let first = try await SwiftClient.pair(uri: invite.uri)
            try await first.send(payload: CBOREncoder.encode(CBORValue(["type": "hello", "protocolVersion": "one", "requestID": 5])))
            let refused = try #require(try await first.next())
            #expect(refused.requestID == 5, "\(refused)")
            #expect(try await first.next() == nil, "the host closes after a bad hello")
            first.close()
            // Once welcomed, bad messages are answered like on the local socket.
            let second = try await rig.pairing.createInvite(scope: .approve, label: nil, addresses: [])
            let client = try await SwiftClient.pair(uri: second.uri)
            guard case .welcome = try await client.hello().body else { Issue.record("no welcome"); return }
            for bad in Self.badFrames {
                try await client.send(payload: CBOREncoder.encode(CBORValue(bad.message)))
                let reply = try #require(try await client.next())
                #expect(reply.requestID == bad.message["requestID"]?.intValue, "\(bad.what): \(reply)")
            }
            client.close()
        }
    }
}
