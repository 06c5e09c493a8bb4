import NucleicTestSupport
import Testing
@testable import NucleicProtocol

@Suite struct MessageTests {
    static let clientMessages = MessageExamples.clientMessages
    static let hostMessages = MessageExamples.hostMessages

    @Test func everyClientMessageRoundTrips() throws {
        #expect(Set(Self.clientMessages.map(\.type)).count == 23)
        for message in Self.clientMessages {
            let text = JSONWriter.string(message.json)
            #expect(text.hasPrefix(#"{"type":""# + message.type), "\(text)")
            #expect(try ClientMsg(json: JSONParser.parse(text)) == message, "\(text)")
        }
    }

    @Test func everyHostMessageRoundTrips() throws {
        #expect(Set(Self.hostMessages.map(\.type)).count == 20)
        for message in Self.hostMessages {
            let text = JSONWriter.string(message.json)
            #expect(try HostMsg(json: JSONParser.parse(text)) == message, "\(text)")
        }
    }

    @Test func scopesAreCheckedPerMessage() {
        let scopes = Dictionary(Self.clientMessages.map { ($0.type, $0.requiredScope) }, uniquingKeysWith: { a, _ in a })
        #expect(scopes["subscribe"] == .view && scopes["listSessions"] == .view && scopes["ping"] == .view)
        #expect(scopes["approvalRespond"] == .approve && scopes["sendInput"] == .approve)
        #expect(scopes["removeProject"] == .control)
        #expect(scopes["interrupt"] == .control && scopes["startSession"] == .control && scopes["shutdown"] == .control)
        #expect(scopes["listRules"] == .control && scopes["addRule"] == .control && scopes["explainRule"] == .control)
        #expect(Scope.view < .approve && Scope.approve < .control)
    }

    @Test func unknownTypesAndFieldsAreHandledAsDocumented() throws {
        #expect(throws: ShapeError.self) { try ClientMsg(json: ["type": "teleport"]) }
        let withExtra = try ClientMsg(json: ["type": "ping", "requestID": 4, "futureField": [1, 2]])
        #expect(withExtra == ClientMsg(.ping, requestID: 4))
        #expect(throws: ShapeError.self) { try ClientMsg(json: ["type": "subscribe", "sessionID": "s", "verbosity": "loud"]) }
    }

    @Test func theAttentionOrderPutsNeedsYouFirstThenNewest() {
        func s(_ id: String, _ status: SessionStatus, _ ms: Int64) -> SessionSummary {
            SessionSummary(sessionID: SessionID(id), projectName: "p", backend: "claude", status: status, title: id, branch: "b",
                           lastSeq: 0, updatedAt: Timestamp(millisecondsSince1970: ms))
        }
        let sorted = [s("done", .finished, 9), s("run-old", .running, 1), s("err", .error, 2), s("run-new", .running, 5),
                      s("wait", .awaitingApproval, 3), s("queued", .queued, 4)].sorted(by: SessionSummary.attentionOrder)
        #expect(sorted.map(\.title) == ["wait", "err", "run-new", "queued", "run-old", "done"])
    }
}
