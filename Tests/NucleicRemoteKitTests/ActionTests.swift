import NucleicProtocol
@testable import NucleicRemoteKit
import NucleicWire
import Testing

@Suite(.timeLimit(.minutes(3))) struct ActionTests {
    func pendingApproval(_ rig: Rig, risk: Risk = .execute) async {
        await rig.host.addSession(Fx.s1, title: "fix-build")
        await rig.host.append(Fx.turn(approval: Fx.approval(Fx.a1, risk: risk)), to: Fx.s1)
    }

    func hasCard(_ client: Connection) async -> RemoteState {
        await client.waitUntil { $0.connection.isLive && $0.canAnswer(Fx.a1) }
    }

    @Test func oneClientAnswersTheOthersCardSaysWhereAndItsLateAnswerIsNormal() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client(label: "Ana's iPhone")
        let laptop = await rig.client(label: "laptop")
        await phone.start()
        await laptop.start()
        _ = await hasCard(phone)
        _ = await hasCard(laptop)
        #expect(await phone.respond(to: Fx.a1, with: .allow) == .done)
        let seen = await laptop.waitUntil { if case .resolved = $0.mirror.approvals[Fx.a1]?.outcome { true } else { false } }
        guard case .resolved(let r) = seen.mirror.approvals[Fx.a1]!.outcome else { return }
        #expect(r.summary == "approved on Ana's iPhone" && !r.byThisDevice)
        #expect(seen.needsMe.allSatisfy { $0.approval == nil })
        // The laptop's answer now: already resolved, a normal outcome; nothing reaches the host.
        #expect(await laptop.respond(to: Fx.a1, with: .deny(message: "no")) == .alreadyResolved("approved on Ana's iPhone"))
        let mine = await phone.waitUntil { if case .resolved = $0.mirror.approvals[Fx.a1]?.outcome { true } else { false } }
        guard case .resolved(let own) = mine.mirror.approvals[Fx.a1]!.outcome else { return }
        #expect(own.byThisDevice && own.summary == "approved on Ana's iPhone")
        #expect(await rig.host.received.count { $0 == "approvalRespond" } == 1)
        await phone.stop()
        await laptop.stop()
    }

    @Test func repliesOfEveryKnownTypeReachTheirRequestAndAnUnknownOneEndsIt() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client(label: "phone", scope: .control)
        await phone.start()
        _ = await hasCard(phone)
        let verdict = await phone.perform(.rules(.explain(toolName: "Bash", input: ["command": "ls"], project: nil, sessionID: Fx.s1)))
        guard case .ruleVerdict(let v)? = verdict?.body else { Issue.record("explain answered \(String(describing: verdict))"); return }
        #expect(v.riskReasons == ["Bash runs a program"] && v.reasons == ["no rule matches"])
        // A type this client cannot read: the request ends with no answer instead of waiting for ever.
        #expect(await phone.perform(.listDevices(includeRevoked: false)) == nil)
        #expect(await phone.state.connection.isLive)
        await phone.stop()
    }

    @Test func losingTheRaceOnTheHostIsAlreadyResolvedNotAnError() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client(label: "phone")
        await phone.start()
        _ = await hasCard(phone)
        // Another device won on the host, and this client has not heard yet.
        await rig.host.resolveSilently(Fx.a1, label: "watch")
        #expect(await phone.respond(to: Fx.a1, with: .allow) == .alreadyResolved("already answered on watch"))
        let s = await phone.state
        #expect(s.mirror.approvals[Fx.a1]!.outcome == .answeredElsewhere(message: "already answered on watch"))
        #expect(s.mirror.approvals[Fx.a1]!.action == .idle && s.banner == nil && s.connection.isLive)
        #expect(!s.canAnswer(Fx.a1))
        await phone.stop()
    }

    @Test func nothingIsSentWhileNotLiveAndNothingIsQueuedForLater() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client()
        await phone.start()
        _ = await hasCard(phone)
        rig.network.setOffline(true)
        await rig.host.dropAll()
        _ = await phone.waitUntil { if case .hostOffline = $0.connection { true } else { false } }
        #expect(await phone.respond(to: Fx.a1, with: .allow) == .notLive("reconnect to act"))
        #expect(await phone.sendInput("go on", to: Fx.s1) == .notLive("reconnect to act"))
        rig.network.setOffline(false)
        _ = await hasCard(phone)
        #expect(await rig.host.received.filter { $0 == "approvalRespond" || $0 == "sendInput" }.isEmpty)
        #expect(await rig.host.isPending(Fx.a1))
        await phone.stop()
    }

    @Test func aDropMidSendFailsVisiblyAndIsNeverResent() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client()
        await phone.start()
        _ = await hasCard(phone)
        rig.network.transports[0].cutAtNextSend()
        let outcome = await phone.respond(to: Fx.a1, with: .allow)
        guard case .failed = outcome else { Issue.record("expected failed, got \(outcome)"); return }
        let after = await phone.state
        #expect(after.mirror.approvals[Fx.a1]!.action == .failed("the connection dropped before the host answered; the approval is still pending unless another device answered"))
        // Reconnected: the approval is still pending on the host, the card can be answered again
        // by the person, and the kit has not resent anything by itself.
        _ = await phone.waitUntil { $0.connection.isLive && $0.mirror.approvals[Fx.a1]?.outcome == .pending }
        #expect(await rig.host.isPending(Fx.a1))
        #expect(await rig.host.received.filter { $0 == "approvalRespond" }.isEmpty)
        #expect(await phone.state.canAnswer(Fx.a1))
        #expect(await phone.respond(to: Fx.a1, with: .allow) == .done)
        await phone.stop()
    }

    @Test func aReplyLostOnTheWayBackFailsAndTheHostsTruthArrivesOnReconnect() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client(label: "phone")
        await phone.start()
        _ = await hasCard(phone)
        // The host takes the answer; its next send (the resolution) is cut.
        await rig.host.cutNextHostSend()
        guard case .failed = await phone.respond(to: Fx.a1, with: .allow) else { Issue.record("expected failed"); return }
        let s = await phone.waitUntil { if case .resolved = $0.mirror.approvals[Fx.a1]?.outcome { $0.connection.isLive } else { false } }
        guard case .resolved(let r) = s.mirror.approvals[Fx.a1]!.outcome else { return }
        #expect(r.byThisDevice && r.summary == "approved on phone")
        #expect(s.mirror.approvals[Fx.a1]!.action == .idle)
        #expect(await rig.host.received.count { $0 == "approvalRespond" } == 1)
        await phone.stop()
    }

    @Test func riskyApprovalsNeedTheDeliberateStepAndViewersCannotAct() async {
        let rig = Rig()
        await pendingApproval(rig, risk: .destructive)
        let phone = await rig.client()
        await phone.start()
        _ = await hasCard(phone)
        #expect(await phone.respond(to: Fx.a1, with: .allow) == .needsDeliberateStep)
        #expect(await phone.respond(to: Fx.a1, with: .allowAlways(scope: .toolThisSession), deliberate: true) == .needsDeliberateStep)
        #expect(await rig.host.received.filter { $0 == "approvalRespond" }.isEmpty)
        #expect(await phone.respond(to: Fx.a1, with: .allow, deliberate: true) == .done)
        await phone.stop()

        let viewer = await rig.client(label: "tv", scope: .view)
        await viewer.start()
        let s = await viewer.waitUntil { $0.connection.isLive && $0.host != nil }
        #expect(!s.actionsEnabled)
        #expect(await viewer.sendInput("hi", to: Fx.s1) == .notLive("this device may only view (scope view)"))
        await viewer.stop()
    }

    @Test func aDenyCanAskForADenyRule() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client()
        await phone.start()
        _ = await hasCard(phone)
        #expect(await phone.respond(to: Fx.a1, with: .allow, denyAlways: .toolThisSession) == .refused(code: "invalidDecision", message: "deny-always goes only with a deny"))
        #expect(await phone.respond(to: Fx.a1, with: .deny(message: "never"), denyAlways: .toolThisSession) == .done)
        #expect(await rig.host.lastDenyAlways == .toolThisSession)
        await phone.stop()
    }

    @Test func followUpInputIsSentAndShowsInTheTranscript() async {
        let rig = Rig()
        await pendingApproval(rig)
        let phone = await rig.client()
        await phone.start()
        _ = await hasCard(phone)
        #expect(await phone.sendInput("also run the tests", to: Fx.s1) == .done)
        let s = await phone.waitUntil { $0.mirror.transcripts[Fx.s1]?.rows.last?.content == .user("also run the tests") }
        #expect(s.mirror.transcripts[Fx.s1]!.input == .idle)
        #expect(await phone.sendInput("x", to: "0193a000-0000-7000-8000-0000000000ff") == .refused(code: "notFound", message: "no session 0193a000-0000-7000-8000-0000000000ff"))
        await phone.stop()
    }
}
