import NucleicRuntime
import NucleicCommandLine

/// `nucleic shim SESSION_FOLDER [--orphan-grace SECONDS] -- AGENT ARGS…`: the per-session shim
/// the daemon starts (hidden: not for people). See `ShimServer` and docs/OPERATIONS.md.
enum ShimCommand {
    static let usage = """
        usage: nucleic shim SESSION_FOLDER [--orphan-grace SECONDS] -- AGENT [ARGS…]

        Started by the daemon, one per session: runs AGENT, journals its lines into
        SESSION_FOLDER/raw.jsonl and serves SESSION_FOLDER/shim.sock. Not for direct use.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        guard let separator = arguments.firstIndex(of: "--"), separator + 1 < arguments.count else {
            throw UsageError(message: "the agent's command line goes after --", usage: usage)
        }
        let own = Array(arguments[..<separator])
        let agent = Array(arguments[(separator + 1)...])
        let parsed = try ArgumentParser(own, valued: ["orphan-grace"], usage: usage)
        guard parsed.positionals.count == 1 else { throw UsageError(message: "give one session folder", usage: usage) }
        var grace: Double?
        if let text = parsed["orphan-grace"] {
            guard let seconds = Double(text), seconds >= 0 else { throw UsageError(message: "--orphan-grace takes seconds", usage: usage) }
            grace = seconds
        }
        return ShimServer.run(ShimServer.Options(folder: parsed.positionals[0], executable: agent[0],
                                                 arguments: Array(agent.dropFirst()), orphanGrace: grace))
    }
}
