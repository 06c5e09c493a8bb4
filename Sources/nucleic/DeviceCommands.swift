#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicSync
import NucleicSystem
import NucleicCommandLine

/// `nucleic pair`, `nucleic devices`, `nucleic revoke`: paired devices, through the daemon
/// (docs/OPERATIONS.md, "Devices").
enum DeviceCommands {
    /// Each device command's help (from NucleicCommands).
    static let usages: [String: String] = Dictionary(uniqueKeysWithValues: NucleicCommands.deviceCommands.map { ($0.path[0], NucleicCommands.table.help($0)) })

    static func run(_ command: String, _ arguments: [String]) throws -> Int32 {
        let usage = usages[command]!
        let result = runBlocking { () async throws -> Int32 in
            switch command {
            case "pair": return try await pair(arguments, usage)
            case "devices": return try await devices(arguments, usage)
            default: return try await revoke(arguments, usage)
            }
        }
        return try result.get()
    }

    static func pair(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["scope", "label"], boolean: ["json"], repeated: ["advertise"], usage: usage)
        _ = try SessionCommands.positionals(parsed, [], usage)
        let scopeText = parsed["scope"] ?? "approve"
        guard let scope = Scope(rawValue: scopeText) else { throw UsageError(message: "--scope is view, approve or control", usage: usage) }
        let client = try await DaemonClient.connect()
        let reply = try await client.request(.createInvite(scope: scope, label: parsed["label"], addresses: parsed.all("advertise")))
        guard case .invite(let invite) = reply.body else { throw CommandError(message: "unexpected reply to createInvite: \(reply.type)") }
        if parsed.flag("json") {
            SessionCommands.json(invite.json)
            return 0
        }
        let qr = try TerminalQR(encoding: invite.uri)
        // Light modules drawn as blocks: right on the usual dark terminal background.
        for line in qr.render(inverted: true) { Output.standardOutput(line) }
        Output.standardOutput("""

            Scan with the Nucleic app, or open this link on the device:
            \(invite.uri)

            scope \(invite.scope.rawValue)\(invite.label.map { ", label \($0)" } ?? ""); connects to \(invite.addresses.joined(separator: ", "))
            valid once, until \(invite.expiresAt) (5 minutes); host key \(invite.hostKey)
            """)
        return 0
    }

    static func devices(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json", "all"], usage: usage)
        _ = try SessionCommands.positionals(parsed, [], usage)
        let client = try await DaemonClient.connect()
        guard case .deviceList(let devices) = try await client.request(.listDevices(includeRevoked: parsed.flag("all"))).body else {
            throw CommandError(message: "unexpected reply to listDevices")
        }
        if parsed.flag("json") {
            SessionCommands.json(.array(devices.map(\.json)))
        } else if devices.isEmpty {
            Output.standardOutput("no paired devices: pair one with `nucleic pair`")
        } else {
            for d in devices {
                let state = d.revokedAt.map { "revoked \($0)" } ?? (d.connections > 0 ? "connected (\(d.connections))" : "paired \(d.createdAt)")
                Output.standardOutput("\(SessionCommands.short(d.deviceID.rawValue))\t\(d.scope.rawValue)\t\(d.label)\t\(state)")
            }
        }
        return 0
    }

    static func revoke(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        let reference = try SessionCommands.positionals(parsed, ["DEVICE"], usage)[0]
        let client = try await DaemonClient.connect()
        guard case .deviceList(let devices) = try await client.request(.revokeDevice(device: reference)).body, let device = devices.first else {
            throw CommandError(message: "unexpected reply to revokeDevice")
        }
        if parsed.flag("json") { SessionCommands.json(device.json); return 0 }
        Output.standardOutput("revoked \(device.deviceID) (\(device.label))")
        return 0
    }
}
