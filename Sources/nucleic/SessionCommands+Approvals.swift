#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime

/// `nucleic approve` / `deny`: answering approvals from the terminal.
extension SessionCommands {
    static func decide(_ command: String, _ arguments: [String], _ usage: String) async throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: command == "approve" ? ["input"] : ["message"],
                                        boolean: command == "approve" ? ["edit"] : ["cancel"],
                                        repeated: command == "approve" ? ["answer"] : [], usage: usage)
        let reference = try positionals(parsed, ["APPROVAL"], usage)[0]
        let ways = [parsed["input"] != nil, parsed.flag("edit"), !parsed.all("answer").isEmpty].filter { $0 }.count
        if ways > 1 { throw UsageError(message: "give one of --input, --edit and --answer", usage: usage) }
        if parsed.flag("cancel") && parsed["message"] != nil { throw UsageError(message: "--cancel takes no --message", usage: usage) }
        let client = try await DaemonClient.connect()
        let approval = try await resolveApproval(reference, client)
        let decision: Decision
        if command == "deny" {
            decision = parsed.flag("cancel") ? .cancel : .deny(message: parsed["message"] ?? "")
        } else if !parsed.all("answer").isEmpty {
            decision = try answers(parsed.all("answer"), to: approval, usage)
        } else if let file = parsed["input"] {
            decision = .allowModified(input: try parseInput(FileText.read(file), from: file))
        } else if parsed.flag("edit") {
            decision = .allowModified(input: try Editor.edit(approval.input))
        } else {
            decision = .allow
        }
        _ = try await client.request(.approvalRespond(approvalID: approval.id, decision: decision))
        Output.standardOutput("\(command == "deny" ? "denied" : "approved") \(short(approval.id.rawValue)) (\(approval.toolName))")
        return 0
    }

    /// `--answer LABEL` for a single question; `--answer "QUESTION=LABEL"` for each of several.
    static func answers(_ values: [String], to approval: ApprovalRequest, _ usage: String) throws -> Decision {
        guard let question = approval.question else {
            throw CommandError(message: "\(short(approval.id.rawValue)) is not a question; approve or deny it")
        }
        var answers: [String: [String]] = [:]
        if question.questions.count == 1 {
            answers[question.questions[0].question] = values
        } else {
            for value in values {
                guard let eq = value.firstIndex(of: "=") else {
                    throw UsageError(message: "this approval asks \(question.questions.count) questions: give --answer \"QUESTION=LABEL\" for each", usage: usage)
                }
                answers[String(value[..<eq]), default: []].append(String(value[value.index(after: eq)...]))
            }
        }
        for item in question.questions {
            guard let chosen = answers[item.question] else { throw CommandError(message: "no answer for \"\(item.question)\"") }
            let labels = item.options.map(\.label)
            for label in chosen where !labels.contains(label) {
                throw CommandError(message: "\"\(label)\" is not an option of \"\(item.question)\" (options: \(labels.joined(separator: ", ")))")
            }
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
