public import NucleicProtocol

/// Push registration (docs/PROTOCOL.md, "Push registration"; docs/CLIENTS.md, "Notifications"):
/// a client tells the host where to push this device, so the ladder's device rung reaches it
/// while the app is closed. The `view` scope suffices.
extension Connection {
    /// What push the host offers, and what this device has registered. For Web Push, subscribe
    /// with `webPushKey` as the `applicationServerKey`, then `registerPush` the subscription.
    public func pushInfo() async -> PushInfoReply {
        guard let link else { return .unavailable(.notLive(state.actionsDisabledReason ?? "reconnect first")) }
        switch await request(.pushInfo, on: link)?.body {
        case .pushInfo(let info)?: return .info(info)
        case .error(let code, let message, _)?: return .unavailable(.refused(code: code.rawValue, message: message))
        case nil: return .unavailable(.failed("the connection dropped before the host answered"))
        default: return .unavailable(.failed("the host answered pushInfo with something else"))
        }
    }

    /// Registers this device's push channel, replacing the one it had. A client registers at
    /// every connect (a Web Push subscription or an APNs token may have changed).
    public func registerPush(_ registration: PushRegistration) async -> ActionOutcome {
        await pushRequest(.registerPush(registration))
    }

    /// Stops pushes to this device (the person turned notifications off in the app).
    public func unregisterPush() async -> ActionOutcome {
        await pushRequest(.unregisterPush)
    }

    private func pushRequest(_ body: ClientMsg.Body) async -> ActionOutcome {
        guard let link else { return .notLive(state.actionsDisabledReason ?? "reconnect first") }
        switch await request(body, on: link)?.body {
        case nil: return .failed("the connection dropped before the host answered")
        case .error(let code, let message, _)?: return .refused(code: code.rawValue, message: message)
        default: return .done
        }
    }
}

/// The answer to `pushInfo()`: the host's push offer, or why there is none.
public enum PushInfoReply: Sendable, Hashable {
    case info(PushInfo)
    case unavailable(ActionOutcome)
}
