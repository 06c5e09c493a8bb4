public import NucleicProtocol
import NucleicWire

extension Connection {
    /// Connect, serve, and after a drop wait and connect again, until stopped or refused for good.
    func run() async {
        var attempt = 0
        var asOf: Timestamp?
        while !stopped, !Task.isCancelled {
            let reason: RemoteError
            do throws(RemoteError) {
                let (link, info) = try await establish()
                attempt = 0
                try await serve(link, info)
                reason = RemoteError(.closed, "the host closed the connection")
            } catch {
                reason = error
            }
            if state.connection.isLive { asOf = clock.now() }
            await teardown()
            if stopped || Task.isCancelled { return }
            switch reason.code {
            case .unauthorized:
                update(.local(.connection(.unauthorized(message: reason.message))))
                return
            case .protocolVersion:
                update(.local(.connection(.incompatible(message: reason.message))))
                return
            case .hostUnreachable:
                update(.local(.connection(.hostOffline(asOf: asOf, attempt: attempt + 1, reason: reason.message))))
            default:
                update(.local(.connection(.reconnecting(asOf: asOf, attempt: attempt + 1, reason: reason.message))))
            }
            let delay = options.backoff.delay(attempt: attempt, jitter: jitter())
            backoffDelays.append(delay)
            attempt += 1
            do { try await clock.sleep(milliseconds: delay) } catch { return }
        }
    }

    /// Dials the host's addresses in order, then IK and hello/welcome on the first that answers.
    func establish() async throws(RemoteError) -> (any MessageLink, HostInfo) {
        guard case .paired(let identity, let dialer) = reach else { return try await open() }
        var lastError = RemoteError(.hostUnreachable, "the host has no address")
        for address in host.addresses {
            let transport: any Transport
            do { transport = try await dialer.connect(to: address) } catch {
                lastError = error
                continue
            }
            if stopped {
                await transport.close()
                throw RemoteError(.closed, "stopped")
            }
            connecting = transport
            defer { connecting = nil }
            let handshake: HandshakeState
            do {
                handshake = try HandshakeState(pattern: .ik, role: .initiator, localStatic: identity, remoteStatic: host.hostKey)
            } catch {
                await transport.close()
                throw RemoteError(.invalidInput, "the pinned host key is unusable: \(error)")
            }
            return try await welcomed(Handshake.perform(handshake, over: transport))
        }
        throw lastError
    }

    /// A link from the opener, then hello/welcome on it.
    func open() async throws(RemoteError) -> (any MessageLink, HostInfo) {
        guard case .opener(let open) = reach else { throw RemoteError(.invalidInput, "no opener") }
        let link = try await open()
        if stopped {
            await link.close()
            throw RemoteError(.closed, "stopped")
        }
        return try await welcomed(link)
    }

    /// Says hello on a new `link` and returns it with the host's welcome; closes it when the
    /// host does not welcome this device.
    private func welcomed(_ link: any MessageLink) async throws(RemoteError) -> (any MessageLink, HostInfo) {
        do throws(RemoteError) {
            let (info, _) = try await Self.greet(link, clientName: options.clientName, label: nil)
            return (link, info)
        } catch {
            await link.close()
            throw error
        }
    }

    /// Live: resubscribe every open session, then apply what arrives until the link ends.
    func serve(_ link: any MessageLink, _ info: HostInfo) async throws(RemoteError) {
        self.link = link
        connects += 1
        update(.local(.welcome(info)))
        let open = subscriptions.keys.sorted()
        update(.local(.connection(.connected(since: clock.now(), catchingUp: open.count))))
        try await link.send(RemoteWire.encode(ClientMsg(.listSessions(includeArchived: false), requestID: takeRequestID())))
        for id in open { await sendSubscribe(id, on: link, catchUp: true) }
        lastReceived = clock.now()
        let heartbeat = options.heartbeatMilliseconds.map { interval in Task { await self.beat(every: interval, on: link) } }
        defer { heartbeat?.cancel() }
        while !stopped {
            guard let bytes = try await link.receive() else { return }
            lastReceived = clock.now()
            try await handle(bytes, on: link)
        }
    }

    func handle(_ bytes: [UInt8], on link: any MessageLink) async throws(RemoteError) {
        // Unknown types are ignored (forward compatible), except that a request they answer is
        // not left waiting; a second welcome changes nothing.
        let incoming = try RemoteWire.decodeHost(bytes)
        if case .unknown(_, let rid?) = incoming { failWaiter(rid) }
        guard case .message(let message) = incoming else { return }
        if case .error(.unauthorized, let text, _) = message.body, message.requestID == nil {
            throw RemoteError(.unauthorized, "the host removed this device: \(text)")
        }
        countDuplicates(message)
        var answered = false
        if let rid = message.requestID, let waiter = waiters.removeValue(forKey: rid) {
            waiter.resume(returning: message)
            answered = true
        }
        if case .error = message.body, answered {
            // The action that asked reports it; not a banner.
        } else {
            update(.host(message))
        }
        if let rid = message.requestID, catchUp.remove(rid) != nil, case .connected(let since, _) = state.connection {
            update(.local(.connection(.connected(since: since, catchingUp: catchUp.count))))
        }
        switch message.body {
        case .sessionList, .sessionUpdated, .sessionCreated: break
        default: return
        }
        if let auto = options.autoSubscribe {
            for s in state.mirror.sessions where !s.status.isArchived && subscriptions[s.sessionID] == nil {
                subscriptions[s.sessionID] = Subscription(verbosity: auto.verbosity, start: options.startFor?(s.sessionID) ?? auto.start)
                await sendSubscribe(s.sessionID, on: link, catchUp: false)
            }
        }
    }

    /// Pings every `interval` ms; closes the link when nothing arrived for two intervals.
    func beat(every interval: Int64, on link: any MessageLink) async {
        while !Task.isCancelled, self.link === link {
            do { try await clock.sleep(milliseconds: interval) } catch { return }
            guard self.link === link, !Task.isCancelled else { return }
            let silent = clock.now().millisecondsSince1970 - (lastReceived?.millisecondsSince1970 ?? 0)
            if silent >= 2 * interval {
                silentLinksDropped += 1
                await link.close()
                return
            }
            try? await link.send(RemoteWire.encode(ClientMsg(.ping, requestID: takeRequestID())))
        }
    }

    func countDuplicates(_ message: HostMsg) {
        guard case .events(let id, let events) = message.body else { return }
        let cursor = state.mirror.transcripts[id]?.cursor ?? 0
        duplicateEventsDropped += events.count { $0.seq <= cursor }
    }

    /// The link is gone: every request waiting for an answer fails now (nothing is retried).
    func teardown() async {
        let old = link
        link = nil
        catchUp = []
        let pending = waiters
        waiters = [:]
        for (_, w) in pending { w.resume(returning: nil) }
        await old?.close()
    }
}

/// What became of an answer or an input. Only `done` means the host took it; `alreadyResolved`
/// is a normal outcome (someone else answered first), not an error.
public enum ActionOutcome: Sendable, Hashable {
    case done
    /// Someone answered first; the message names who.
    case alreadyResolved(String)
    /// Not sent: the channel is not live (or the scope does not allow it).
    case notLive(String)
    /// Not sent: this approval needs the deliberate step (`RiskGate`) first.
    case needsDeliberateStep
    /// Sent, but the channel dropped before the host answered: the request may still be pending
    /// on the host. Nothing will resend it.
    case failed(String)
    /// The host refused it (`forbidden`, `unsupported`, `notFound`, …).
    case refused(code: String, message: String)
}

extension Connection {
    /// Answers an approval, only on a live channel. `deliberate` says the surface took the
    /// deliberate step (Face ID, an opened card, a typed confirmation) that `RiskGate` asks for.
    /// `denyAlways` (beside a deny only) also asks the host for a deny rule at that scope.
    public func respond(to approvalID: ApprovalID, with decision: Decision, denyAlways: ApprovalScope? = nil,
                        deliberate: Bool = false) async -> ActionOutcome {
        guard let card = state.mirror.approvals[approvalID] else {
            return .refused(code: "notFound", message: "no approval \(approvalID.rawValue) is known to this client")
        }
        switch card.outcome {
        case .resolved(let r): return .alreadyResolved(r.summary)
        case .answeredElsewhere(let message): return .alreadyResolved(message)
        case .withdrawn(let reason): return .refused(code: "withdrawn", message: "no answer is needed any more: \(reason)")
        case .pending: break
        }
        guard RiskGate.permits(decision, for: card.approval, deliberate: deliberate) else { return .needsDeliberateStep }
        if denyAlways != nil, decision.allowsTool {
            return .refused(code: "invalidDecision", message: "deny-always goes only with a deny")
        }
        guard state.actionsEnabled, let link else { return .notLive(state.actionsDisabledReason ?? "reconnect to act") }
        return await act(
            .approvalRespond(approvalID: approvalID, decision: decision, denyAlways: denyAlways), on: link,
            sending: .answerSending(approvalID), accepted: .answerAccepted(approvalID),
            failed: { .answerFailed(approvalID, message: $0) },
            dropped: "the connection dropped before the host answered; the approval is still pending unless another device answered",
            alreadyResolved: { .answerAlreadyResolved(approvalID, message: $0) })
    }

    /// Sends a follow-up to a session, only on a live channel.
    public func sendInput(_ text: String, to sessionID: SessionID) async -> ActionOutcome {
        guard state.actionsEnabled, let link else { return .notLive(state.actionsDisabledReason ?? "reconnect to act") }
        return await act(
            .sendInput(sessionID: sessionID, text: text), on: link,
            sending: .inputSending(sessionID), accepted: .inputAccepted(sessionID),
            failed: { .inputFailed(sessionID, message: $0) },
            dropped: "the connection dropped before the host answered; the input may not have arrived")
    }

    /// Sends an action's request on `link`, telling the reducer `sending`, then what the reply
    /// says: `accepted`, or `failed` with the host's refusal or with `dropped` when the link
    /// dropped first. With `alreadyResolved`, the host's `alreadyResolved` refusal is told that
    /// way instead and is not a failure.
    private func act(
        _ body: ClientMsg.Body, on link: any MessageLink, sending: LocalIntent, accepted: LocalIntent,
        failed: (String) -> LocalIntent, dropped: String, alreadyResolved: ((String) -> LocalIntent)? = nil
    ) async -> ActionOutcome {
        update(.local(sending))
        switch await request(body, on: link)?.body {
        case nil:
            update(.local(failed(dropped)))
            return .failed(dropped)
        case .error(let code, let message, _):
            if code == .alreadyResolved, let alreadyResolved {
                update(.local(alreadyResolved(message)))
                return .alreadyResolved(message)
            }
            update(.local(failed(message)))
            return .refused(code: code.rawValue, message: message)
        default:
            update(.local(accepted))
            return .done
        }
    }

    /// Any other request (interrupt, getDiff, integrate, discard…), only on a live channel: the
    /// host's reply, or nil when not live or the link dropped before the reply. The host judges
    /// the scope (a device with `approve` is refused control requests with `forbidden`).
    public func perform(_ body: ClientMsg.Body) async -> HostMsg? {
        guard state.connection.isLive, let link else { return nil }
        return await request(body, on: link)
    }

    /// Sends one request and waits for its reply; nil when the link drops first.
    func request(_ body: ClientMsg.Body, on link: any MessageLink) async -> HostMsg? {
        let rid = takeRequestID()
        let bytes = RemoteWire.encode(ClientMsg(body, requestID: rid))
        return await withCheckedContinuation { (c: CheckedContinuation<HostMsg?, Never>) in
            waiters[rid] = c
            Task {
                do throws(RemoteError) { try await link.send(bytes) } catch { self.failWaiter(rid) }
            }
        }
    }

    func failWaiter(_ rid: Int64) {
        waiters.removeValue(forKey: rid)?.resume(returning: nil)
    }
}
