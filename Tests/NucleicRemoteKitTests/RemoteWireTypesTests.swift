import NucleicProtocol
@testable import NucleicRemoteKit
import NucleicTestSupport
import Testing

/// The client core reads every reply the host sends: none is dropped as an unknown type (a
/// request waiting on one would never get its answer).
@Suite struct RemoteWireTypesTests {
    @Test func everyHostMessageTypeIsOneTheClientCoreReads() throws {
        let more = [HostMsg(.discarded(sessionID: "0193a000-0000-7000-8000-000000000001", branch: "nucleic/x", snapshot: nil, branchDeleted: false), requestID: 4),
                    HostMsg(.deviceList([]), requestID: 5), HostMsg(.notifyChannels([]), requestID: 6)]
        for message in MessageExamples.hostMessages + more where message.type != "welcome" {
            guard case .message(let read) = try RemoteWire.decodeHost(RemoteWire.encode(message)) else {
                Issue.record("\(message.type) is dropped as an unknown type")
                continue
            }
            #expect(read == message, "\(message.type)")
        }
        #expect(try RemoteWire.decodeHost(RemoteWire.encode(HostMsg(.pong, requestID: 9))) == .message(HostMsg(.pong, requestID: 9)))
    }
}
