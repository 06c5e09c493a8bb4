#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicCommandLine

/// `nucleic integrate` / `overlap`.
extension SessionCommands {
    static func integrate(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["message"],
                                        boolean: ["merge", "rebase", "squash", "no-ff", "keep", "interrupt", "resolve-with-agent", "json"], usage: usage)
        let reference = try positionals(parsed, ["SESSION"], usage)[0]
        let strategies = ["merge", "rebase", "squash"].filter { parsed.flag($0) }
        let resolve = parsed.flag("resolve-with-agent")
        guard resolve ? strategies.isEmpty : strategies.count == 1 else {
            throw UsageError(message: resolve ? "--resolve-with-agent takes no strategy" : "choose one of --merge, --rebase and --squash", usage: usage)
        }
        if parsed.flag("no-ff") && strategies != ["merge"] { throw UsageError(message: "--no-ff is for --merge", usage: usage) }
        if parsed["message"] != nil && strategies != ["squash"] { throw UsageError(message: "--message is for --squash", usage: usage) }
        let client = try await DaemonClient.connect()
        let summary = try await resolveSession(reference, client)
        let request = ClientMsg.Integrate(
            strategy: strategies.first ?? "merge", sessionID: summary.sessionID, message: parsed["message"],
            noFastForward: parsed.flag("no-ff"), keep: parsed.flag("keep"), interrupt: parsed.flag("interrupt"), resolveWithAgent: resolve)
        let reply = try await client.request(.integrate(request))
        if parsed.flag("json") { json(reply.json) }
        switch reply.body {
        case .integrated(_, let commit, let strategy, let fastForward, let paths):
            if !parsed.flag("json") {
                Output.standardOutput("integrated \(summary.displayName) into its base by \(strategy)\(fastForward ? " (fast-forward)" : ""): \(commit) (\(paths.count) files)")
            }
            return 0
        case .integrationRefused(_, let reason, let paths, let message):
            if !parsed.flag("json") {
                Output.standardError("nucleic: \(message)")
                for path in paths { Output.standardError("  \(path)") }
            }
            return reason == "conflicted" ? 3 : reason == "dirtyBase" ? 4 : reason == "nothingToIntegrate" ? 0 : 1
        case .ok:
            if !parsed.flag("json") { Output.standardOutput("asked the agent of \(summary.displayName) to resolve the conflicts; integrate again when it is done") }
            return 0
        default:
            throw CommandError(message: "unexpected reply to integrate: \(reply.type)")
        }
    }

    static func overlap(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        guard parsed.positionals.count <= 1 else { throw UsageError(message: "give at most one PROJECT", usage: usage) }
        let client = try await DaemonClient.connect()
        let project = try await ProjectFromFolder.resolve(parsed.positionals.first, client)
        guard case .overlap(let files) = try await client.request(.overlap(project: project)).body else {
            throw CommandError(message: "unexpected reply to overlap")
        }
        if parsed.flag("json") {
            json(.object(JSONObject(files.keys.sorted().map { JSONObject.Entry($0, .array(files[$0]!.map { .string($0.rawValue) })) })))
        } else if files.isEmpty {
            Output.standardOutput("no file is touched by two live sessions")
        } else {
            for path in files.keys.sorted() { Output.standardOutput("\(path)  \(files[path]!.map { short($0.rawValue) }.joined(separator: ", "))") }
        }
        return 0
    }
}
