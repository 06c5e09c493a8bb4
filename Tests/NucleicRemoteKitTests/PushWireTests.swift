import NucleicProtocol
@testable import NucleicRemoteKit
import Testing

/// The kit reads the host's answers to its push calls as messages (a type it did not know would
/// be dropped as unknown, and the call would wait for ever).
@Suite struct PushWireTests {
    @Test func theKitReadsThePushInfoReplyAndTheRegistrationsTravelWhole() throws {
        let info = HostMsg(.pushInfo(PushInfo(providers: [.webPush, .apns], webPushKey: "BPk", registered: .apns)), requestID: 9)
        guard case .message(let decoded) = try RemoteWire.decodeHost(RemoteWire.encode(info)) else { Issue.record("pushInfo is unknown to the kit"); return }
        #expect(decoded == info)
        let none = HostMsg(.pushInfo(PushInfo(providers: [], webPushKey: nil)), requestID: 10)
        guard case .message(let empty) = try RemoteWire.decodeHost(RemoteWire.encode(none)) else { Issue.record("unknown"); return }
        #expect(empty == none)
        for body: ClientMsg.Body in [.registerPush(.webPush(endpoint: "https://push.example/a", p256dh: "BPk", auth: "au")),
                                     .registerPush(.apns(token: String(repeating: "ab", count: 32))), .unregisterPush, .pushInfo] {
            let message = ClientMsg(body, requestID: 3)
            #expect(try RemoteWire.decodeClient(RemoteWire.encode(message)).message == message)
            #expect(message.requiredScope == .view)
        }
    }
}
