import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing
@testable import NucleicSync
import NucleicSockets

/// The built CLI and its daemon started on demand with NUCLEIC_LISTEN, a private NUCLEIC_HOME:
/// `nucleic pair --json` gives a URI the Python client pairs with, `nucleic devices` lists the
/// device, `nucleic revoke` closes its live connection; and the QR code drawn for the URI.
@Suite(.serialized, .enabled(if: PeerPython.path != nil || PeerPython.isCI, "NUCLEIC_PEERS_PYTHON is not set: run eval \"$(scripts/peers.sh)\""))
struct DeviceCommandTests {
    struct Run {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs the built CLI (`NucleicCommand`: no descriptor leaks to the daemon it starts, so
    /// reading its output to the end finishes).
    static func nucleic(_ arguments: [String], environment: [String: String]) async throws -> Run {
        let run = try await NucleicCommand.run(arguments, environment: environment, workingDirectory: "/")
        return Run(status: run.code, stdout: run.stdout, stderr: run.stderr)
    }

    /// A port nothing listens on right now (bound, read, released).
    static func freePort() throws -> Int {
        let probe = try TCPListener(host: "127.0.0.1", port: 0)
        defer { probe.close() }
        return probe.port
    }

    @Test func pairDevicesAndRevokeThroughTheDaemon() async throws {
        let home = "/tmp/nrem-cli-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let port = try Self.freePort()
        let environment = ["NUCLEIC_HOME": home, "NUCLEIC_LISTEN": "127.0.0.1:\(port)"]

        let pair = try await Self.nucleic(["pair", "--scope", "approve", "--json"], environment: environment)
        #expect(pair.status == 0, "\(pair.stderr)")
        let invite = try Invite(json: JSONParser.parse(pair.stdout))
        #expect(invite.addresses == ["127.0.0.1:\(port)"])
        let uri = try PairingURI(parsing: invite.uri)
        #expect(Base64URL.encode(uri.hostKey) == invite.hostKey)
        var info = stat()
        #expect(lstat(home + "/host.key", &info) == 0 && info.st_mode & 0o777 == 0o600)

        let peer = try RemoteClientPeer()
        let paired = try await peer.call(["op": "pair", "uri": invite.uri, "static": RemoteClientPeer.randomKey(), "label": "Ana's phone"])
        let deviceID = try #require((paired["welcome"] as? [String: Any])?["deviceID"] as? String)

        let listed = try await Self.nucleic(["devices", "--json"], environment: environment)
        guard case .array(let devices) = try JSONParser.parse(listed.stdout) else { Issue.record("not a list"); return }
        let device = try DeviceInfo(json: try #require(devices.first))
        #expect(device.deviceID.rawValue == deviceID && device.label == "Ana's phone" && device.scope == .approve && device.connections == 1)
        #expect(try await Self.nucleic(["devices"], environment: environment).stdout.contains("Ana's phone\tconnected (1)"))

        let revoke = try await Self.nucleic(["revoke", String(deviceID.prefix(10))], environment: environment)
        #expect(revoke.status == 0 && revoke.stdout.contains("revoked \(deviceID)"), "\(revoke.stderr)")
        #expect(try await peer.call(["op": "closed"])["closed"] as? Bool == true)
        #expect(try await Self.nucleic(["devices"], environment: environment).stdout.contains("no paired devices"))
        #expect(try await Self.nucleic(["devices", "--all"], environment: environment).stdout.contains("revoked"))
        let unknown = try await Self.nucleic(["revoke", "zzzz"], environment: environment)
        #expect(unknown.status == 2 && unknown.stderr.contains("no device zzzz"))
        await peer.close()
        _ = try await Self.nucleic(["stop-daemon"], environment: environment)
    }

    @Test func pairRefusesWithoutAListener() async throws {
        let home = "/tmp/nrem-cli-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: home) }
        let environment = ["NUCLEIC_HOME": home, "NUCLEIC_LISTEN": ""]
        let pair = try await Self.nucleic(["pair"], environment: environment)
        #expect(pair.status == 1)
        #expect(pair.stderr.contains("does not listen for devices"))
        _ = try await Self.nucleic(["stop-daemon"], environment: environment)
    }

    @Test func theQRCodeDrawsEveryModuleWithHalfBlocks() throws {
        let uri = "nucleic://pair?v=1&hk=1dIhP4Sdir-tLeaUYMvC_VOBPJSNC7B9Gm4EYH8kZ0Q&psk=WtVb_qeNMkxKqMNs6oCo213it2P66XJ8p_wwUsMhkX4&addr=127.0.0.1:47391&name=vm"
        let qr = try TerminalQR(encoding: uri)
        #expect(qr.size >= 21 && (qr.size - 17) % 4 == 0, "a QR code is 17 + 4·version modules wide")
        // Finder pattern: the top-left 7×7 has a dark ring, a light ring, a dark 3×3 centre.
        #expect((0..<7).allSatisfy { qr.isDark(x: $0, y: 0) && qr.isDark(x: 0, y: $0) } && !qr.isDark(x: 1, y: 1) && qr.isDark(x: 3, y: 3))
        for inverted in [false, true] {
            let lines = qr.render(inverted: inverted)
            let side = qr.size + 2 * TerminalQR.quietZone
            #expect(lines.count == (side + 1) / 2)
            // Reading the blocks back gives every module, the quiet zone light.
            for (row, line) in lines.enumerated() {
                let characters = Array(line)
                #expect(characters.count == side)
                for (column, character) in characters.enumerated() {
                    let x = column - TerminalQR.quietZone
                    let y = 2 * row - TerminalQR.quietZone
                    let top = character == "█" || character == "▀"
                    let bottom = character == "█" || character == "▄"
                    #expect(top == (qr.isDark(x: x, y: y) != inverted))
                    if y + 1 < qr.size + TerminalQR.quietZone { #expect(bottom == (qr.isDark(x: x, y: y + 1) != inverted)) }
                }
            }
        }
    }

    @Test func thePairingURIRoundTrips() throws {
        let uri = PairingURI(hostKey: Array(0..<32), psk: Array(100..<132), addresses: ["127.0.0.1:7420", "[::1]:7420"], name: "Ana's Mac & co")
        let parsed = try PairingURI(parsing: uri.string)
        #expect(parsed == uri)
        #expect(uri.string.contains("name=Ana%27s%20Mac%20%26%20co"))
        #expect(throws: ShapeError.self) { try PairingURI(parsing: "nucleic://pair?v=2&hk=AA") }
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
            #expect(!Base64URL.encode(bytes).contains("="))
        }
    }
}
