import Foundation
import NucleicProtocol
import NucleicSockets
import NucleicTestSupport
import Testing
@testable import NucleicSync

/// Presence: the sessions someone has open, counted over every client's foreground subscriptions.
@Suite struct PresenceTests {
    @Test func foregroundSubscriptionsAreCountedAndReleased() async throws {
        try await RemoteRig.with { rig in
            let session = try await rig.startSession()
            let id = session.sessionID
            var changes = rig.server.presence.changes().makeAsyncIterator()

            func subscribe(_ client: LocalConnection, foreground: Bool, requestID: Int64) async throws {
                try await client.send(WireMessages.encode(ClientMsg(.subscribe(sessionID: id, sinceSeq: nil, verbosity: .statusOnly, foreground: foreground),
                                                                    requestID: requestID)))
            }
            let watch = try UnixClient.connect(path: rig.root + "/s.sock")
            let phone = try UnixClient.connect(path: rig.root + "/s.sock")
            let background = try UnixClient.connect(path: rig.root + "/s.sock")
            try await subscribe(background, foreground: false, requestID: 1)
            try await subscribe(watch, foreground: true, requestID: 2)
            #expect(await changes.next() == Presence.Change(sessionID: id, foreground: true))
            try await subscribe(phone, foreground: true, requestID: 3)
            // Its reply first: otherwise, on a loaded machine, the watch's unsubscribe below can be
            // served before it and the presence goes false and back to true.
            var phoneReplies = phone.frames.makeAsyncIterator()
            while let frame = await phoneReplies.next(), try WireMessages.decodeHost(frame).requestID != 3 {}
            // The second view changes nothing; closing one of two keeps the session looked at.
            try await watch.send(WireMessages.encode(ClientMsg(.unsubscribe(sessionID: id), requestID: 4)))
            var replies = watch.frames.makeAsyncIterator()
            while let frame = await replies.next(), try WireMessages.decodeHost(frame).requestID != 4 {}
            #expect(rig.server.presence.foregroundSessions == [id])
            // The last view goes with its connection.
            phone.close()
            #expect(await changes.next() == Presence.Change(sessionID: id, foreground: false))
            #expect(rig.server.presence.foregroundSessions == [])
            // A listener that comes later hears who looks now first.
            try await subscribe(background, foreground: true, requestID: 5)
            var late = rig.server.presence.changes().makeAsyncIterator()
            #expect(await late.next() == Presence.Change(sessionID: id, foreground: true))
            // A foreground subscription to a session that does not exist counts for nothing.
            let unknown = SessionID("0190f000-0000-7000-8000-00000000dead")
            try await background.send(WireMessages.encode(ClientMsg(.subscribe(sessionID: unknown, sinceSeq: nil, verbosity: .full, foreground: true),
                                                                    requestID: 6)))
            var answers = background.frames.makeAsyncIterator()
            while let frame = await answers.next(), try WireMessages.decodeHost(frame).requestID != 6 {}
            #expect(rig.server.presence.foregroundSessions == [id])
            watch.close()
            background.close()
        }
    }
}
