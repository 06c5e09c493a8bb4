import NucleicProtocol

/// Counts derived from an agent's raw stdout lines, independently of the codecs, so that a test
/// comparing events never only confirms the codec with itself.
enum RawCounts {
    /// Claude Code: `can_use_tool` requests; tool_use ids (assistant blocks and streamed block
    /// starts) in first-seen order; tool_result ids; `result` lines' is_error.
    static func claude(_ lines: [String]) -> EventCounts {
        var approvals = 0
        var started: [String] = []
        var completed: [String] = []
        var runs: [Bool] = []
        for line in lines {
            guard let m = try? JSONParser.parse(line) else { continue }
            switch m["type"]?.stringValue {
            case "control_request" where m["request"]?["subtype"]?.stringValue == "can_use_tool":
                approvals += 1
                if let id = m["request"]?["tool_use_id"]?.stringValue, !started.contains(id) { started.append(id) }
            case "stream_event" where m["event"]?["content_block"]?["type"]?.stringValue == "tool_use":
                if let id = m["event"]?["content_block"]?["id"]?.stringValue, !started.contains(id) { started.append(id) }
            case "assistant":
                for block in m["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_use" {
                    if let id = block["id"]?.stringValue, !started.contains(id) { started.append(id) }
                }
            case "user":
                for block in m["message"]?["content"]?.arrayValue ?? [] where block["type"]?.stringValue == "tool_result" {
                    if let id = block["tool_use_id"]?.stringValue { completed.append(id) }
                }
            case "result":
                runs.append(m["is_error"]?.boolValue ?? false)
            default: continue
            }
        }
        return EventCounts(approvals: approvals, started: started, completed: completed, runs: runs)
    }

    /// Codex app-server: approval and question requests; commandExecution / fileChange items
    /// started and completed; `turn/completed` statuses other than completed as errors.
    static func codex(_ lines: [String]) -> EventCounts {
        var approvals = 0
        var started: [String] = []
        var completed: [String] = []
        var runs: [Bool] = []
        let toolItems: Set<String> = ["commandExecution", "fileChange", "mcpToolCall", "webSearch"]
        for line in lines {
            guard let m = try? JSONParser.parse(line), let method = m["method"]?.stringValue else { continue }
            switch method {
            case _ where m["id"] != nil && (method.hasSuffix("/requestApproval") || method.hasSuffix("/requestUserInput")):
                approvals += 1
            case "item/started":
                if let item = m["params"]?["item"], toolItems.contains(item["type"]?.stringValue ?? ""), let id = item["id"]?.stringValue {
                    started.append(id)
                }
            case "item/completed":
                if let item = m["params"]?["item"], toolItems.contains(item["type"]?.stringValue ?? ""), let id = item["id"]?.stringValue {
                    completed.append(id)
                }
            case "turn/completed":
                runs.append(m["params"]?["turn"]?["status"]?.stringValue != "completed")
            default: continue
            }
        }
        return EventCounts(approvals: approvals, started: started, completed: completed, runs: runs)
    }
}

/// Event counts compared with `RawCounts`.
struct EventCounts: Equatable, CustomStringConvertible {
    var approvalsRequested = 0
    var toolCallsStarted: [String] = []
    var toolCallsCompleted: [String] = []
    var runs: [Bool] = []

    init(_ events: [AgentEvent]) {
        for event in events {
            switch event {
            case .approvalRequested: approvalsRequested += 1
            case .toolCallStarted(let call): toolCallsStarted.append(call.toolCallID)
            case .toolCallCompleted(let result): toolCallsCompleted.append(result.toolCallID)
            case .runFinished(let run): runs.append(run.isError)
            default: break
            }
        }
    }

    init(approvals: Int, started: [String], completed: [String], runs: [Bool]) {
        approvalsRequested = approvals
        toolCallsStarted = started
        toolCallsCompleted = completed
        self.runs = runs
    }

    var description: String {
        "approvals \(approvalsRequested), started \(toolCallsStarted), completed \(toolCallsCompleted), runs(isError) \(runs)"
    }
}
