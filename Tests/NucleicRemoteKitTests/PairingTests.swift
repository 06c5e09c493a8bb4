import Foundation
import Glibc
import NucleicProtocol
@testable import NucleicRemoteKit
import NucleicWire
import Testing

/// A TCP listener on 127.0.0.1 handing each accepted connection to the test host.
final class TCPListener: @unchecked Sendable {
    // @unchecked: `fd` and `port` are set once in init; the accept loop only reads them.
    let fd: Int32
    let port: UInt16

    init(host: TestHost) throws {
        let sock = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(sock, $0, len) == 0 && getsockname(sock, $0, &len) == 0 }
        }
        guard bound, listen(sock, 16) == 0 else { throw RemoteError(.io, "cannot listen: \(String(cString: strerror(errno)))") }
        fd = sock
        port = UInt16(bigEndian: addr.sin_port)
        let fd = self.fd
        let port = self.port
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { if errno == EINTR { continue } else { _ = Glibc.close(fd); return } }
                host.accept(TCPTransport(fd: client, address: "127.0.0.1:\(port)"))
            }
        }
    }

    var address: String { "127.0.0.1:\(port)" }

    func close() { _ = shutdown(fd, Int32(SHUT_RDWR)) }
}

@Suite(.timeLimit(.minutes(3))) struct PairingTests {
    @Test func pairOverTCPThenConnectWithIKAndFollowASession() async throws {
        let host = TestHost()
        let listener = try TCPListener(host: host)
        defer { listener.close() }
        await host.addSession(Fx.s1, title: "fix-build")
        await host.append(Fx.turn(approval: Fx.approval(Fx.a1, risk: .write)), to: Fx.s1)
        let invite = await host.makeInvite(scope: .approve, address: listener.address)
        let parsed = try PairingInvite(invite.uri)
        #expect(parsed == invite)
        let identity = NoiseKeyPair.generate()
        let paired = try await Connection.pair(invite: parsed, identity: identity, label: "Ana's iPhone", clientName: "test", dialer: TCPDialer())
        #expect(paired.hostName == "test-host" && paired.scope == .approve && paired.label == "Ana's iPhone" && paired.deviceID != nil)
        #expect(paired.hostKey == host.key.publicKey)
        #expect(try PairedHost(json: paired.json) == paired)

        let client = Connection(host: paired, identity: identity, dialer: TCPDialer(), options: .init(autoSubscribe: (.full, .snapshot)))
        await client.start()
        let s = await client.waitUntil { $0.connection.isLive && $0.canAnswer(Fx.a1) && $0.mirror.transcripts[Fx.s1]?.cursor == 12 }
        #expect(s.host?.deviceID == paired.deviceID)
        #expect(s.mirror.transcripts[Fx.s1]!.rows.count == 6)
        #expect(await client.respond(to: Fx.a1, with: .allow) == .done)
        let done = await client.waitUntil { if case .resolved = $0.mirror.approvals[Fx.a1]?.outcome { true } else { false } }
        guard case .resolved(let r) = done.mirror.approvals[Fx.a1]!.outcome else { return }
        #expect(r.summary == "approved on Ana's iPhone" && r.byThisDevice)
        await client.stop()

        // The invitation was single use.
        await #expect(throws: RemoteError.self) {
            _ = try await Connection.pair(invite: parsed, identity: .generate(), label: "again", clientName: "test", dialer: TCPDialer())
        }
    }

    @Test func pairingRefusesAHostWhoseKeyIsNotTheInvitesOne() async throws {
        let host = TestHost()
        let listener = try TCPListener(host: host)
        defer { listener.close() }
        var invite = await host.makeInvite(address: listener.address)
        invite.hostKey = NoiseKeyPair.generate().publicKey
        do {
            _ = try await Connection.pair(invite: invite, identity: .generate(), label: "x", clientName: "test", dialer: TCPDialer())
            Issue.record("paired with the wrong host")
        } catch {
            #expect(error.code == .handshakeFailed)
            #expect(error.message.contains("remoteStaticMismatch") || error.message.contains("pinned"))
        }
    }

    @Test func nothingListeningIsHostOffline() async throws {
        let host = TestHost()
        let listener = try TCPListener(host: host)
        let address = listener.address
        listener.close()
        do {
            _ = try await TCPDialer().connect(to: address)
            Issue.record("connected to a closed port")
        } catch {
            #expect(error.code == .hostUnreachable)
        }
        await #expect(throws: RemoteError.self) { _ = try await TCPDialer().connect(to: "127.0.0.1") }
    }
}

@Suite struct RoutesAndGateTests {
    @Test func deepLinksParseToRoutesAndBack() throws {
        #expect(try Route("nucleic://session/0193A000-0000-7000-8000-000000000001") == .session(Fx.s1))
        #expect(try Route("nucleic://approval/\(Fx.a1.rawValue)") == .approval(Fx.a1))
        #expect(try Route(Route.session(Fx.s1).link) == .session(Fx.s1))
        for bad in ["http://session/x", "nucleic://session/", "nucleic://session/a/b", "nucleic://session/a b", "nucleic://elsewhere/x", "nucleic://pair?v=2"] {
            #expect(throws: RemoteError.self, "\(bad)") { _ = try Route(bad) }
        }
    }

    @Test func pairingLinksRoundTripAndExplainWhatIsWrong() throws {
        let invite = PairingInvite(hostKey: Array(0..<32), secret: Array(repeating: 7, count: 32), addresses: ["127.0.0.1:7800", "[::1]:7800"], hostName: "Ana's Mac")
        let uri = invite.uri
        #expect(uri.contains("name=Ana%27s%20Mac") && uri.contains("&addr=127.0.0.1:7800&addr=[::1]:7800"))
        #expect(try PairingInvite(uri) == invite)
        #expect(try Route(uri) == .pair(invite))
        func message(_ s: String) -> String { do { _ = try PairingInvite(s); return "" } catch { return error.message } }
        #expect(message("nucleic://pair?v=1&psk=\(Base64URL.encode(invite.secret))&addr=a:1").contains("hk must be a 32-byte key"))
        #expect(message("nucleic://pair?v=1&hk=\(Base64URL.encode(invite.hostKey))&psk=AAAA&addr=a:1").contains("psk must be"))
        #expect(message("nucleic://pair?v=1&hk=\(Base64URL.encode(invite.hostKey))&psk=\(Base64URL.encode(invite.secret))").contains("no addr"))
        #expect(message("nucleic://pair?v=2&hk=x").contains("version 2 is not 1"))
    }

    @Test func base64urlMatchesRFC4648WithoutPadding() {
        let vectors: [(String, String)] = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy")]
        for (plain, encoded) in vectors {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Base64URL.decode(encoded) == Array(plain.utf8))
        }
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xfb, 0xff])
        for bad in ["Zg==", "Z", "a+b/"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
    }

    @Test func riskGateAnswersInlineOnlyUpToExecuteAndNeverOffersAllowAlwaysForTheRiskiest() {
        for risk in Risk.allCases {
            let a = Fx.approval(Fx.a1, risk: risk)
            let v = RiskGate.verdict(for: a)
            let inline = risk == .readOnly || risk == .write || risk == .execute
            #expect(v.allowInline == inline && v.needsDeliberateStep == !inline, "\(risk)")
            #expect(v.allowAlwaysScopes == (risk >= .network ? [] : a.offeredScopes), "\(risk)")
            #expect(RiskGate.permits(.deny(message: ""), for: a, deliberate: false))
            #expect(RiskGate.permits(.allow, for: a, deliberate: false) == inline, "\(risk)")
            #expect(RiskGate.permits(.allow, for: a, deliberate: true))
            #expect(RiskGate.permits(.allowAlways(scope: .toolThisSession), for: a, deliberate: true) == (risk < .network), "\(risk)")
            #expect(!RiskGate.permits(.allowAlways(scope: .rule("Bash(*)")), for: a, deliberate: true), "not offered")
        }
        var question = Fx.approval(Fx.a1, risk: .readOnly)
        question.question = StructuredQuestion(questions: [.init(question: "Which?", options: [.init(label: "A")])])
        #expect(!RiskGate.verdict(for: question).allowInline && RiskGate.permits(.answer(answers: ["Which?": ["A"]]), for: question, deliberate: false))
        var codex = Fx.approval(Fx.a1, risk: .write)
        codex.capabilities = .codex
        #expect(!RiskGate.permits(.allowModified(input: [:]), for: codex, deliberate: true))
    }

    @Test func backoffDoublesToItsCapWithEqualJitter() {
        let b = Backoff(initialMilliseconds: 100, maxMilliseconds: 1000)
        #expect((0..<6).map { b.nominal(attempt: $0) } == [100, 200, 400, 800, 1000, 1000])
        #expect(b.delay(attempt: 0, jitter: 0) == 50 && b.delay(attempt: 0, jitter: 0.999) == 99 && b.delay(attempt: 3, jitter: 1) == 800)
        #expect(b.delay(attempt: 1000, jitter: .nan) == 500)
    }
}
