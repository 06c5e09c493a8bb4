import NucleicCommandLine
import NucleicProtocol
import NucleicSystem

/// `nucleic notify ls` and `nucleic notify test [CHANNEL]`: the daemon's notification channels
/// (docs/OPERATIONS.md, "Notifications").
enum NotifyCommand {
    static var usage: String { NucleicCommands.help("notify") }

    static func run(_ arguments: [String]) throws -> Int32 {
        try runBlocking { () async throws -> Int32 in
            let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
            let positionals = parsed.positionals
            guard let sub = positionals.first, sub == "ls" || sub == "test", positionals.count <= (sub == "test" ? 2 : 1) else {
                throw UsageError(message: "notify takes ls or test [CHANNEL]", usage: usage)
            }
            let client = try await DaemonClient.connect()
            let body: ClientMsg.Body = sub == "ls" ? .notifyStatus : .notifyTest(channel: positionals.count == 2 ? positionals[1] : nil)
            guard case .notifyChannels(let channels) = try await client.request(body).body else {
                throw CommandError(message: "unexpected reply to \(sub == "ls" ? "notifyStatus" : "notifyTest")")
            }
            if parsed.flag("json") {
                SessionCommands.json(.array(channels.map(\.json)))
                return 0
            }
            if channels.isEmpty {
                Output.standardOutput("no notification channels: no session bus for the desktop, and no ntfy-url or webhook-url set")
                return 0
            }
            for c in channels {
                let last = c.lastResult.map { "\($0) \(c.lastAt.map(\.description) ?? "")" } ?? "nothing sent yet"
                Output.standardOutput("\(c.channel)\t\(c.stage)\t\(c.categories.joined(separator: ","))\t\(last)")
            }
            return sub == "test" && channels.contains(where: { $0.lastResult != "shown" }) ? 1 : 0
        }.get()
    }
}
