import Foundation
import NucleicProtocol
import NucleicSockets
import NucleicStore
import NucleicTestSupport
import Testing
@testable import NucleicSync

/// A resubscribe from any seq works on any transcript length: the backlog arrives in bounded
/// pages, whole and in order, however much larger than one frame (16 MiB) it is.
@Suite(.serialized) struct BacklogTests {
    static let count: Int64 = 300_000

    /// A stored session (as after a daemon restart) whose transcript holds `count` events, written
    /// straight through the store: about 60 MB, several times what one frame may carry.
    static func storedSession(_ rig: RemoteRig) async throws -> SessionSummary {
        let project = try await rig.host.addProject(path: rig.repo, name: nil)
        let record = SessionRecord(projectID: project.id, backend: "replay", title: "a long answer", prompt: "Think, then answer.",
                                   status: .finished, branch: "nucleic/long", baseBranch: "main", lastSeq: count)
        try await rig.host.store.insert(record)
        let transcript = try SessionFolder(home: rig.root + "/home", session: record.id).openTranscript()
        defer { transcript.close() }
        let text = String(repeating: "a delta of an answer streamed word by word ", count: 4)
        var seq: Int64 = 1
        while seq <= count {
            let upper = min(count, seq + 4_999)
            try transcript.append((seq...upper).map {
                SequencedEvent(seq: $0, ts: Timestamp(millisecondsSince1970: 1_790_000_000_000 + $0), event: .assistantText(text: text, isPartial: true))
            }, sync: false)
            seq = upper + 1
        }
        try transcript.sync()
        return try await rig.host.summary(record.id)
    }

    @Test func aSubscriberReadsAThreeHundredThousandEventBacklogWhole() async throws {
        try await RemoteRig.with { rig in
            let summary = try await Self.storedSession(rig)
            let session = summary
            #expect(summary.lastSeq == Self.count)

            // Resubscribing from seq 0 reads every event, each once, in order.
            let client = try UnixClient.connect(path: rig.root + "/s.sock")
            defer { client.close() }
            try await client.send(WireMessages.encode(ClientMsg(.subscribe(sessionID: session.sessionID, sinceSeq: 0, verbosity: .full), requestID: 1)))
            var expected: Int64 = 1
            var replied = false
            var messages = 0
            for await frame in client.frames {
                let message = try WireMessages.decodeHost(frame)
                guard case .events(let id, let events) = message.body, id == session.sessionID else { continue }
                if message.requestID == 1 { replied = true }
                #expect(replied, "the reply comes first")
                messages += 1
                for event in events {
                    guard event.seq == expected else {
                        Issue.record("seq \(event.seq) where \(expected) was due")
                        return
                    }
                    expected += 1
                }
                if expected > summary.lastSeq { break }
            }
            #expect(expected == summary.lastSeq + 1, "read up to \(expected - 1) of \(summary.lastSeq)")
            #expect(messages > 1, "a backlog this long comes in pages")
        }
    }
}
