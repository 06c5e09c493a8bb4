import Foundation
import NucleicProtocol
import NucleicTestSupport
@testable import NucleicStore

/// A fresh folder under the system temp folder, removed when the value is released.
final class TempFolder: @unchecked Sendable {  // immutable after init; removal happens once in deinit
    let path: String

    init(_ name: String = "store") {
        let template = NSTemporaryDirectory() + "nucleic-\(name)-XXXXXX"
        var bytes = Array(template.utf8CString)
        path = bytes.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// A seeded generator (SplitMix64, NucleicTestSupport's) so failures reproduce.
typealias SeededRandom = SeededGenerator

enum Events {
    static let texts = ["ls -la", "héllo wörld ✓", "line one\nline two", "a \"quoted\" \\ path", "tab\there", "emoji 😀 and 中文", "", "\u{0001}\u{001F} control"]

    /// Event `seq` of a varied, deterministic transcript. Every event from the agent has its own
    /// raw offset (no groups) unless `rawOffset` says otherwise.
    static func make(_ seq: Int64, rawOffset: Int64?? = nil, textSize: Int = 0) -> SequencedEvent {
        let text = texts[Int(seq) % texts.count] + (textSize > 0 ? String(repeating: "x", count: textSize) : "")
        let event: AgentEvent
        switch seq % 9 {
        case 0: event = .assistantText(text: text, isPartial: seq % 2 == 0)
        case 1: event = .toolCallStarted(ToolCall(toolCallID: "toolu_\(seq)", name: "Bash", toolKind: .execute,
                                                  input: ["command": .string(text), "timeout": .int(seq), "nested": ["rawOffset": 5]]))
        case 2: event = .toolCallCompleted(ToolResult(toolCallID: "toolu_\(seq - 1)", status: .completed, output: text, exitCode: 0))
        case 3: event = .statusChanged(status: .running, reason: text)
        case 4: event = .usage(Usage(inputTokens: seq, outputTokens: seq * 2))
        case 5: event = .notice(level: .warning, message: text, code: nil)
        case 6: event = .runFinished(RunFinished(isError: false, stopReason: "end_turn", result: text, costUSD: 0.00028))
        case 7: event = .unknown(raw: #"{"type":"x","rawOffset":12}"#)
        default: event = .reasoning(text: text, isPartial: false)
        }
        let raw: Int64? = rawOffset ?? (seq % 4 == 3 ? nil : seq * 100)
        return SequencedEvent(seq: seq, ts: Timestamp(millisecondsSince1970: 1_790_000_000_000 + seq), event: event, rawOffset: raw)
    }

    static func range(_ r: ClosedRange<Int64>, textSize: Int = 0) -> [SequencedEvent] { r.map { make($0, textSize: textSize) } }
}

/// The process's resident set size in bytes (from /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return (fields.count > 1 ? Int(fields[1]) ?? 0 : 0) * Int(sysconf(Int32(_SC_PAGESIZE)))
}

func fileSize(_ path: String) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? -1
}

func readBytes(_ path: String) -> [UInt8] {
    (try? Array(Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
}

func writeBytes(_ bytes: [UInt8], to path: String) {
    precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "cannot write \(path)")
}

func truncateFile(_ path: String, to length: Int64) {
    precondition(truncate(path, off_t(length)) == 0, "truncate \(path)")
}

/// Runs a command; returns its exit status and output.
@discardableResult
func run(_ argv: [String]) -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: argv[0])
    process.arguments = Array(argv.dropFirst())
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    do { try process.run() } catch { return (-1, "\(error)") }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
