#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import NucleicProtocol
import NucleicRuntime
import NucleicCommandLine

/// `nucleic approve` / `deny`: answering approvals from the terminal.
extension SessionCommands {
    static func decide(_ command: String, _ arguments: [String], _ usage: String) async throws -> Int32 {
        let approving = command == "approve"
        let parsed = try ArgumentParser(arguments, valued: approving ? ["input", "always"] : ["message", "rule"],
                                        boolean: approving ? ["edit", "json"] : ["cancel", "always", "json"],
                                        repeated: approving ? ["answer"] : [], usage: usage)
        let reference = try positionals(parsed, ["APPROVAL"], usage)[0]
        let ways = [parsed["input"] != nil, parsed.flag("edit"), !parsed.all("answer").isEmpty].filter { $0 }.count
        if ways > 1 { throw UsageError(message: "give one of --input, --edit and --answer", usage: usage) }
        if parsed.flag("cancel") && parsed["message"] != nil { throw UsageError(message: "--cancel takes no --message", usage: usage) }
        if parsed.flag("cancel") && (parsed.flag("always") || parsed["rule"] != nil) {
            throw UsageError(message: "--cancel ends the turn; it makes no rule (deny with --always or --rule instead)", usage: usage)
        }
        if !approving && parsed.flag("always") && parsed["rule"] != nil { throw UsageError(message: "give --always or --rule, not both", usage: usage) }
        let alwaysScope = try parsed["always"].map { try scope($0, usage) }
        if alwaysScope != nil && ways > 0 { throw UsageError(message: "--always allows the request as it is; it cannot be combined with --input, --edit or --answer", usage: usage) }
        let client = try await DaemonClient.connect()
        let approval = try await resolveApproval(reference, client)
        let decision: Decision
        var denyAlways: ApprovalScope?
        if !approving {
            decision = parsed.flag("cancel") ? .cancel : .deny(message: parsed["message"] ?? "")
            if let rule = parsed["rule"] { denyAlways = .rule(rule) }
            if parsed.flag("always") { denyAlways = isShell(approval.toolName) ? .exactCommandThisSession : .toolThisSession }
        } else if !parsed.all("answer").isEmpty {
            decision = try answers(parsed.all("answer"), to: approval, usage)
        } else if let file = parsed["input"] {
            decision = .allowModified(input: try parseInput(FileText.read(file), from: file))
        } else if parsed.flag("edit") {
            decision = .allowModified(input: try Editor.edit(approval.input))
        } else if let alwaysScope {
            decision = .allowAlways(scope: alwaysScope)
        } else {
            decision = .allow
        }
        _ = try await client.request(.approvalRespond(approvalID: approval.id, decision: decision, denyAlways: denyAlways))
        if parsed.flag("json") { json(decided(approval, decision, always: alwaysScope ?? denyAlways)); return 0 }
        let remembered = (alwaysScope ?? denyAlways).map { " and every later request matching \(describe($0, approval))" } ?? ""
        Output.standardOutput("\(approving ? "approved" : "denied") \(approval.displayName) (\(approval.toolName))\(remembered)")
        return 0
    }

    /// `nucleic answer APPROVAL CHOICE...`
    static func answer(_ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        guard parsed.positionals.count >= 2 else {
            throw UsageError(message: parsed.positionals.isEmpty ? "missing APPROVAL" : "missing CHOICE", usage: usage)
        }
        let client = try await DaemonClient.connect()
        let approval = try await resolveApproval(parsed.positionals[0], client)
        let decision = try answers(Array(parsed.positionals.dropFirst()), to: approval, usage)
        _ = try await client.request(.approvalRespond(approvalID: approval.id, decision: decision))
        if parsed.flag("json") { json(decided(approval, decision, always: nil)); return 0 }
        Output.standardOutput("answered \(approval.displayName)")
        return 0
    }

    /// `log --follow` at a terminal: asks for `approval` and sends the answer. An empty line (or
    /// the end of input) leaves it pending; a race lost to another client says what won.
    static func answerInline(_ approval: ApprovalRequest, _ client: DaemonClient) async {
        let id = approval.displayName
        let hint = approval.question == nil ? "[y]es / [n]o / a reason to deny" : "a number, a label or your own answer / [n]o to decline"
        Output.write(1, "answer \(id): \(hint) (empty: later) › ")
        let line: String? = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: readLine()) }
        }
        guard let text = line?.trimmingCharacters(), !text.isEmpty else {
            Output.standardOutput("  left pending: `nucleic approve \(id)` / `deny` / `answer` later")
            return
        }
        let decision: Decision
        if approval.question != nil && !["n", "no"].contains(text.lowercased()) {
            do { decision = try answers([text], to: approval, "") } catch {
                Output.standardOutput("  \(error); left pending")
                return
            }
        } else {
            switch text.lowercased() {
            case "y", "yes": decision = .allow
            case "n", "no": decision = .deny(message: "")
            default: decision = .deny(message: text)
            }
        }
        do {
            _ = try await client.request(.approvalRespond(approvalID: approval.id, decision: decision))
        } catch {
            Output.standardOutput("  \(error)")
        }
    }

    static func isShell(_ toolName: String) -> Bool { toolName == "Bash" || toolName == "exec_command" }

    /// `command`, `tool`, or a rule in Claude Code's syntax.
    static func scope(_ text: String, _ usage: String) throws -> ApprovalScope {
        switch text {
        case "command", "exactCommandThisSession": return .exactCommandThisSession
        case "tool", "toolThisSession": return .toolThisSession
        case "": throw UsageError(message: "--always needs a scope: command, tool, or a rule such as 'Bash(npm test *)'", usage: usage)
        default:
            guard text.first?.isLetter == true else {
                throw UsageError(message: "'\(text)' is not a scope: give command, tool, or a rule such as 'Bash(npm test *)'", usage: usage)
            }
            return .rule(text)
        }
    }

    static func describe(_ scope: ApprovalScope, _ approval: ApprovalRequest) -> String {
        switch scope {
        case .exactCommandThisSession: "this exact command in this session"
        case .toolThisSession: "\(approval.toolName) in this session"
        case .rule(let rule): "\(rule) in this project"
        }
    }

    /// `--answer CHOICE` for a single question; `--answer "QUESTION=CHOICE"` for each of several
    /// (QUESTION: its text or its number). A choice is an option's number, its label in any
    /// case, or free text where the agent takes an answer of its own (QuestionAnswer).
    static func answers(_ values: [String], to approval: ApprovalRequest, _ usage: String) throws -> Decision {
        guard let question = approval.question else {
            throw CommandError(message: "\(approval.displayName) is not a question; approve or deny it")
        }
        var given: [String: [String]] = [:]
        if question.questions.count == 1 {
            given[question.questions[0].question] = values
        } else {
            for value in values {
                guard let eq = value.firstIndex(of: "=") else {
                    throw UsageError(message: "this approval asks \(question.questions.count) questions: give \"QUESTION=CHOICE\" for each (QUESTION: its text or number)", usage: usage)
                }
                var key = String(value[..<eq])
                if let number = Int(key), number >= 1, number <= question.questions.count { key = question.questions[number - 1].question }
                given[key, default: []].append(String(value[value.index(after: eq)...]))
            }
        }
        var answers: [String: [String]] = [:]
        for item in question.questions {
            guard let chosen = given[item.question] else { throw CommandError(message: "no answer for \"\(item.question)\"") }
            do throws(ShapeError) {
                // Several words for a single choice are one answer ("Other" text typed unquoted).
                var labels: [String] = []
                for choice in item.multiSelect ? chosen : [chosen.joined(separator: " ")] {
                    labels += try QuestionAnswer.resolve(choice, for: item)
                }
                answers[item.question] = labels
            } catch { throw CommandError(message: error.message) }
        }
        return .answer(answers: answers)
    }

    static func parseInput(_ text: String, from source: String) throws -> JSONValue {
        do {
            let value = try JSONParser.parse(text)
            guard case .object = value else { throw CommandError(message: "\(source): the input must be a JSON object") }
            return value
        } catch let error as CommandError { throw error } catch {
            throw CommandError(message: "\(source) is not valid JSON: \(error)")
        }
    }
}
