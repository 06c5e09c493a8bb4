import Testing
@testable import NucleicWire

/// The two ends of a completed handshake.
struct ChannelPair: ~Copyable {
    var initiator: SecureChannel
    var responder: SecureChannel
}

/// The payloads each side received, in message order.
struct HandshakeTranscript {
    var messages: [[UInt8]] = []
    var payloadsReceived: [[UInt8]] = []
}

/// Keys for a handshake between two fresh parties.
struct Parties {
    var initiatorStatic = NoiseKeyPair.generate()
    var responderStatic = NoiseKeyPair.generate()
    var psk: [UInt8] = (0..<32).map { UInt8($0 &* 7 &+ 3) }

    func initiator(_ pattern: NoisePattern, remoteStatic: [UInt8]? = nil, psk: [UInt8]? = nil) throws -> HandshakeState {
        switch pattern {
        case .xxpsk3:
            try HandshakeState(pattern: .xxpsk3, role: .initiator, localStatic: initiatorStatic, remoteStatic: remoteStatic,
                               psk: SecretBytes(copying: psk ?? self.psk))
        case .ik:
            try HandshakeState(pattern: .ik, role: .initiator, localStatic: initiatorStatic, remoteStatic: remoteStatic ?? responderStatic.publicKey)
        }
    }

    func responder(_ pattern: NoisePattern, remoteStatic: [UInt8]? = nil, psk: [UInt8]? = nil) throws -> HandshakeState {
        switch pattern {
        case .xxpsk3:
            try HandshakeState(pattern: .xxpsk3, role: .responder, localStatic: responderStatic, remoteStatic: remoteStatic,
                               psk: SecretBytes(copying: psk ?? self.psk))
        case .ik:
            try HandshakeState(pattern: .ik, role: .responder, localStatic: responderStatic, remoteStatic: remoteStatic)
        }
    }
}

/// Runs every remaining handshake message from the side whose turn it is to the other, the i-th
/// one run here with payload `payloads[i]` (empty when absent); `tamper` may change it on the way.
func runHandshake(
    _ initiator: inout HandshakeState, _ responder: inout HandshakeState, payloads: [[UInt8]] = [],
    tamper: (Int, inout [UInt8]) -> Void = { _, _ in }
) throws -> HandshakeTranscript {
    var transcript = HandshakeTranscript()
    var index = 0
    while !(initiator.isComplete && responder.isComplete) {
        let payload = index < payloads.count ? payloads[index] : []
        var message: [UInt8]
        let received: [UInt8]
        if initiator.step == .write {
            message = try initiator.writeMessage(payload: payload)
            tamper(index, &message)
            transcript.messages.append(message)
            received = try responder.readMessage(message)
        } else {
            message = try responder.writeMessage(payload: payload)
            tamper(index, &message)
            transcript.messages.append(message)
            received = try initiator.readMessage(message)
        }
        transcript.payloadsReceived.append(received)
        index += 1
    }
    return transcript
}

/// A completed handshake between `parties`.
func connect(_ pattern: NoisePattern, _ parties: Parties = Parties()) throws -> ChannelPair {
    var initiator = try parties.initiator(pattern)
    var responder = try parties.responder(pattern)
    _ = try runHandshake(&initiator, &responder)
    return ChannelPair(initiator: try initiator.finish(), responder: try responder.finish())
}

/// The code of the `NoiseError` `body` throws, or nil when it does not throw.
func noiseErrorCode(_ body: () throws -> Void) -> NoiseError.Code? {
    do {
        try body()
        return nil
    } catch let error as NoiseError {
        return error.code
    } catch {
        Issue.record("expected a NoiseError, got \(error)")
        return nil
    }
}

/// The code of the `SecureFrameError` `body` throws, or nil when it does not throw.
func frameErrorCode(_ body: () throws -> Void) -> SecureFrameError.Code? {
    do {
        try body()
        return nil
    } catch let error as SecureFrameError {
        return error.code
    } catch {
        Issue.record("expected a SecureFrameError, got \(error)")
        return nil
    }
}
