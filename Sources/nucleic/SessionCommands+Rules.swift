import NucleicProtocol
import NucleicRuntime
import NucleicCommandLine

/// `nucleic rules ls|add|rm|explain`: the host's permission rules.
extension SessionCommands {
    static func rules(_ arguments: [String], _ usage: String) async throws -> Int32 {
        guard let sub = arguments.first else { throw UsageError(message: "missing ls, add, rm or explain", usage: usage) }
        let rest = Array(arguments.dropFirst())
        switch sub {
        case "ls":
            let parsed = try ArgumentParser(rest, valued: ["project"], boolean: ["json"], usage: usage)
            _ = try positionals(parsed, [], usage)
            let client = try await DaemonClient.connect()
            let rules = try await ruleList(client.request(.rules(.list(project: parsed["project"]))))
            if parsed.flag("json") { json(.array(rules.map(\.json))); return 0 }
            if rules.isEmpty { Output.standardOutput("no rules (add one with `nucleic rules add`, or answer with --always)"); return 0 }
            for rule in rules { Output.standardOutput(row(rule)) }
            return 0

        case "add":
            let parsed = try ArgumentParser(rest, valued: ["project", "session", "message"], boolean: ["deny", "json"], usage: usage)
            let text = try positionals(parsed, ["RULE"], usage)[0]
            if parsed["project"] != nil && parsed["session"] != nil { throw UsageError(message: "give --project or --session, not both", usage: usage) }
            if parsed["message"] != nil && !parsed.flag("deny") { throw UsageError(message: "--message is what a deny rule tells the agent; add --deny", usage: usage) }
            let client = try await DaemonClient.connect()
            let session = try await parsed["session"].asyncMap { try await resolveSession($0, client).sessionID }
            let request = RuleRequest.add(rule: text, behavior: parsed.flag("deny") ? .deny : .allow, project: parsed["project"],
                                          sessionID: session, message: parsed["message"])
            let added = try await ruleList(client.request(.rules(request)))
            if parsed.flag("json") { json(.array(added.map(\.json))); return 0 }
            for rule in added { Output.standardOutput("added " + row(rule)) }
            return 0

        case "rm":
            let parsed = try ArgumentParser(rest, valued: [], boolean: ["json"], usage: usage)
            let reference = try positionals(parsed, ["RULE_ID"], usage)[0]
            let client = try await DaemonClient.connect()
            let removed = try await ruleList(client.request(.rules(.remove(ruleID: reference.lowercased()))))
            if parsed.flag("json") { json(.array(removed.map(\.json))); return 0 }
            for rule in removed {
                Output.standardOutput("removed " + row(rule))
            }
            return 0

        case "explain":
            let parsed = try ArgumentParser(rest, valued: ["project", "session"], boolean: ["json"], usage: usage)
            let values = try positionals(parsed, ["TOOL", "INPUT_JSON"], usage)
            if parsed["project"] != nil && parsed["session"] != nil { throw UsageError(message: "give --project or --session, not both", usage: usage) }
            let input = try parseInput(values[1], from: "INPUT_JSON")
            let client = try await DaemonClient.connect()
            let session = try await parsed["session"].asyncMap { try await resolveSession($0, client).sessionID }
            let reply = try await client.request(.rules(.explain(toolName: values[0], input: input, project: parsed["project"], sessionID: session)))
            guard case .ruleVerdict(let verdict) = reply.body else { throw CommandError(message: "unexpected reply \(reply.body)") }
            if parsed.flag("json") { json(verdict.json); return 0 }
            Output.standardOutput(render(verdict))
            return 0

        default:
            throw UsageError(message: "unknown rules command '\(sub)'", usage: usage)
        }
    }

    static func ruleList(_ reply: HostMsg) throws -> [RuleInfo] {
        guard case .ruleList(let rules) = reply.body else { throw CommandError(message: "unexpected reply \(reply.body)") }
        return rules
    }

    static func row(_ rule: RuleInfo) -> String {
        let scope = rule.sessionID.map { "session \(short($0.rawValue))" } ?? "project"
        let origin = rule.fromApproval.map { ", from approval \(short($0.rawValue))" } ?? ""
        let message = rule.message.map { " — “\($0)”" } ?? ""
        return "\(short(rule.id.rawValue))  \(rule.behavior.rawValue.padding(5))  \(rule.rule)  (\(scope); \(rule.createdBy) \(rule.createdAt)\(origin))\(message)"
    }

    static func render(_ verdict: RuleVerdict) -> String {
        var lines = ["outcome: \(verdict.outcome.rawValue)" + (verdict.decidedBy.map { " (rule \(short($0.rawValue)))" } ?? ""),
                     "risk:    \(verdict.risk.rawValue)"]
        for reason in verdict.riskReasons { lines.append("         - \(reason)") }
        if verdict.rules.isEmpty {
            lines.append("rules:   none match")
        } else {
            lines.append("rules:")
            for match in verdict.rules {
                let note = match.note.map { ": \($0)" } ?? ""
                lines.append("  \(short(match.ruleID.rawValue))  \(match.behavior.rawValue) \(match.rule) matches \(match.part)\(match.honoured ? "" : " (not counted\(note))")")
            }
        }
        if !verdict.reasons.isEmpty {
            lines.append("asks because:")
            for reason in verdict.reasons { lines.append("  - \(reason)") }
        }
        return lines.joined(separator: "\n")
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
