import Testing
@testable import NucleicSync

/// The remote listener's admission as a state machine: the whole state after every event.
struct AdmissionTests {
    final class Peer {}
    let clock = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { clock + .seconds(seconds) }

    @Test func pendingConnectionsOfOneAddressEvictTheOldestAndNeverTakeADevicesSlot() {
        let limits = Admission.Limits(maxPending: 4, maxPendingPerAddress: 2, maxAuthenticated: 2, attemptBurst: 10, attemptsPerSecond: 1)
        var admission = Admission(limits: limits)
        let peers = (0..<6).map { _ in Peer() }
        let keys = peers.map(ObjectIdentifier.init)
        let r1 = admission.arrive(keys[0], address: "10.0.0.9", now: at(0))
        #expect(r1 == .admit(evicting: nil))
        let r2 = admission.arrive(keys[1], address: "10.0.0.9", now: at(0))
        #expect(r2 == .admit(evicting: nil))
        #expect(admission.pending.map(\.key) == [keys[0], keys[1]])
        // A third from the same address pushes out its oldest silent one.
        let r3 = admission.arrive(keys[2], address: "10.0.0.9", now: at(0))
        #expect(r3 == .admit(evicting: keys[0]))
        #expect(admission.pending.map(\.key) == [keys[1], keys[2]])
        #expect(admission.authenticated.isEmpty)
        // Another address has a budget of its own.
        let r4 = admission.arrive(keys[3], address: "10.0.0.7", now: at(0))
        #expect(r4 == .admit(evicting: nil))
        #expect(admission.pending.map(\.key) == [keys[1], keys[2], keys[3]])
        // The device proves its key: it leaves the pending budget for the authenticated one.
        let r5 = admission.authenticate(keys[3])
        #expect(r5)
        #expect(admission.pending.map(\.key) == [keys[1], keys[2]])
        #expect(admission.authenticated == [keys[3]])
        // Pending connections fill the total: the next evicts the oldest of the busiest address.
        let r6 = admission.arrive(keys[4], address: "10.0.0.8", now: at(0))
        #expect(r6 == .admit(evicting: nil))
        let r7 = admission.arrive(keys[5], address: "10.0.0.8", now: at(0))
        #expect(r7 == .admit(evicting: nil))
        #expect(admission.pending.map(\.key) == [keys[1], keys[2], keys[4], keys[5]])
        let late = Peer()
        let r8 = admission.arrive(ObjectIdentifier(late), address: "10.0.0.7", now: at(0))
        #expect(r8 == .admit(evicting: keys[1]))
        #expect(admission.pending.map(\.key) == [keys[2], keys[4], keys[5], ObjectIdentifier(late)])
        #expect(admission.authenticated == [keys[3]])
        admission.leave(keys[3])
        #expect(admission.authenticated.isEmpty)
    }

    @Test func anAddressOutOfTokensIsRefusedUntilTheyRefill() {
        let limits = Admission.Limits(maxPending: 100, maxPendingPerAddress: 100, maxAuthenticated: 1, attemptBurst: 3, attemptsPerSecond: 2)
        var admission = Admission(limits: limits)
        let peers = (0..<6).map { _ in Peer() }
        for index in 0..<3 {
            let r9 = admission.arrive(ObjectIdentifier(peers[index]), address: "a", now: at(0))
            #expect(r9 == .admit(evicting: nil))
        }
        #expect(admission.buckets["a"] == Admission.Bucket(tokens: 0, updated: at(0)))
        let fourth = admission.arrive(ObjectIdentifier(peers[3]), address: "a", now: at(0.25))
        guard case .refuse(let reason) = fourth else {
            Issue.record("a fourth attempt at once was admitted"); return
        }
        #expect(reason == "too many connection attempts from a (more than 2 a second)")
        #expect(admission.pending.count == 3)
        #expect(admission.buckets["a"] == Admission.Bucket(tokens: 0.5, updated: at(0.25)))
        // Another address is untouched; half a second later "a" has one token again.
        let r10 = admission.arrive(ObjectIdentifier(peers[4]), address: "b", now: at(0.25))
        #expect(r10 == .admit(evicting: nil))
        let r11 = admission.arrive(ObjectIdentifier(peers[5]), address: "a", now: at(0.5))
        #expect(r11 == .admit(evicting: nil))
        #expect(admission.buckets["a"] == Admission.Bucket(tokens: 0, updated: at(0.5)))
    }

    @Test func theAuthenticatedBudgetIsBounded() {
        var admission = Admission(limits: Admission.Limits(maxAuthenticated: 1))
        let (first, second) = (Peer(), Peer())
        _ = admission.arrive(ObjectIdentifier(first), address: "a", now: at(0))
        _ = admission.arrive(ObjectIdentifier(second), address: "a", now: at(0))
        let r12 = admission.authenticate(ObjectIdentifier(first))
        #expect(r12)
        let r13 = admission.authenticate(ObjectIdentifier(second))
        #expect(!r13)
        #expect(admission.pending.isEmpty)
        #expect(admission.authenticated == [ObjectIdentifier(first)])
    }

    @Test func logLinesAreOnePerIntervalPerAddressWithACount() {
        var admission = Admission(limits: Admission.Limits(logInterval: .seconds(10)))
        let r14 = admission.shouldLog("a", now: at(0))
        #expect(r14 == (true, 0))
        let r15 = admission.shouldLog("a", now: at(1))
        #expect(r15 == (false, 0))
        let r16 = admission.shouldLog("a", now: at(2))
        #expect(r16 == (false, 0))
        let r17 = admission.shouldLog("b", now: at(2))
        #expect(r17 == (true, 0))
        #expect(admission.logs["a"] == Admission.LogState(last: at(0), unreported: 2))
        let r18 = admission.shouldLog("a", now: at(10))
        #expect(r18 == (true, 2))
        #expect(admission.logs["a"] == Admission.LogState(last: at(10), unreported: 0))
        admission.prune(now: at(30))
        #expect(admission.logs.isEmpty && admission.buckets.isEmpty)
    }

    @Test func peerNamesGiveTheirAddress() {
        #expect(Admission.address(ofPeer: "127.0.0.1:4567") == "127.0.0.1")
        #expect(Admission.address(ofPeer: "[::1]:4567") == "::1")
        #expect(Admission.address(ofPeer: "host") == "host")
    }
}
