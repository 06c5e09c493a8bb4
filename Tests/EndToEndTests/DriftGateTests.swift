import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicTestSupport
import Testing

/// The drift gate's judgement (`Tests/Peers/drift.py compare`, docs/DRIFT.md) on doctored copies
/// of recorded fixtures: what it names, and the exit status that tells broken from compatible.
/// The gate's real run (installing a release, re-recording) is not part of the suite.
@Suite struct DriftGateTests {
    static let scenarios = ["plain", "tool-allow", "edit"]

    struct Run {
        var status: ChildProcess.ExitStatus
        var report: String
        var stderr: String
    }

    /// A scratch folder with copies of `scenarios` from Fixtures/claude, each line passed
    /// through `doctor(scenario, records)`.
    func folder(_ name: String, backend: String = "claude", scenarios: [String] = scenarios,
                doctor: (String, [Fixture.Record]) -> [Fixture.Record] = { $1 }) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-drift-test-\(UUID().uuidString)/\(name)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for scenario in scenarios {
            let fixture = try Fixture.named(backend, scenario)
            var text = JSONWriter.string(fixture.header) + "\n"
            for record in doctor(scenario, fixture.records) {
                let value: JSONValue = ["t": .double(record.t), "dir": .string(record.direction), "line": .string(record.line)]
                text += JSONWriter.string(value) + "\n"
            }
            try text.write(to: dir.appendingPathComponent(scenario + ".jsonl"), atomically: true, encoding: .utf8)
        }
        return dir
    }

    func compare(_ old: URL, _ new: URL, backend: String = "claude", schemas: (URL, URL)? = nil) async throws -> Run {
        let report = old.deletingLastPathComponent().appendingPathComponent("report-\(new.lastPathComponent).md")
        let schemaArguments = schemas.map { ["--old-schema", $0.0.path, "--new-schema", $0.1.path] } ?? []
        let process = try ChildProcess.spawn(executable: Peers.python, arguments: [
            "\(Peers.repoRoot)/Tests/Peers/drift.py", "compare", "--backend", backend,
            "--old", old.path, "--new", new.path, "--nucleic", NucleicBinary.path, "--report", report.path,
        ] + schemaArguments)
        async let out: [UInt8] = process.stdout.reduce(into: []) { $0 += $1 }
        async let err: [UInt8] = process.stderr.reduce(into: []) { $0 += $1 }
        process.closeStdin()
        let (o, e) = await (out, err)
        let status = await process.wait()
        let written = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
        #expect(written == String(decoding: o, as: UTF8.self) || status == .exited(5), "the report on stdout and in --report")
        return Run(status: status, report: written, stderr: String(decoding: e, as: UTF8.self))
    }

    /// The lines of one report section, without its heading.
    func section(_ report: String, _ heading: String) -> String {
        guard let start = report.range(of: "## \(heading)\n") else { return "" }
        let rest = report[start.upperBound...]
        return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
    }

    static func edit(_ line: String, _ change: (inout JSONObject) -> Void) -> String {
        guard var object = (try? JSONParser.parse(line))?.objectValue else { return line }
        change(&object)
        return JSONWriter.string(.object(object))
    }

    static func type(_ line: String) -> String? { (try? JSONParser.parse(line))?["type"]?.stringValue }

    @Test func theSameRecordingsAreCompatible() async throws {
        let old = try folder("old")
        defer { try? FileManager.default.removeItem(at: old.deletingLastPathComponent()) }
        let run = try await compare(old, try folder("same"))
        #expect(run.status == .exited(0), "\(run.stderr)\n\(run.report)")
        #expect(run.report.contains("**Verdict: COMPATIBLE** (exit 0)"))
        #expect(section(run.report, "Broken").contains("(nothing)"))
        #expect(section(run.report, "New information Nucleic ignores").contains("(nothing)"))
        #expect(run.report.contains("| tool-allow | accepted |"))
    }

    @Test func aNewMessageTypeAndFieldAreNewInformationIgnored() async throws {
        let old = try folder("old")
        defer { try? FileManager.default.removeItem(at: old.deletingLastPathComponent()) }
        let new = try folder("new") { scenario, records in
            var out: [Fixture.Record] = []
            for record in records {
                var record = record
                if record.direction == "out", Self.type(record.line) == "result" {
                    record.line = Self.edit(record.line) { $0["served_from"] = "mock" }
                    if scenario == "tool-allow" {
                        out.append(Fixture.Record(t: record.t, direction: "out", line: #"{"type":"system","subtype":"weather_report","sunny":true}"#))
                    }
                }
                out.append(record)
            }
            return out
        }
        let run = try await compare(old, new)
        #expect(run.status == .exited(3), "\(run.stderr)\n\(run.report)")
        #expect(run.report.contains("**Verdict: COMPATIBLE, WITH NEW INFORMATION IGNORED** (exit 3)"))
        let ignored = section(run.report, "New information Nucleic ignores")
        #expect(ignored.contains("new message kind `system/weather_report` (in tool-allow)"), "\(ignored)")
        #expect(ignored.contains("`result/success`: new field `served_from (string)`"), "\(ignored)")
        #expect(ignored.contains("`unknown` event `system/weather_report` (tool-allow ×1)"), "\(ignored)")
        #expect(section(run.report, "Broken").contains("(nothing)"))
    }

    @Test func aRenamedFieldAndARemovedMessageTypeAreBroken() async throws {
        let old = try folder("old")
        defer { try? FileManager.default.removeItem(at: old.deletingLastPathComponent()) }
        let new = try folder("new") { _, records in
            records.compactMap { record in
                guard record.direction == "out" else { return record }
                var record = record
                switch Self.type(record.line) {
                case "control_request":
                    // Renamed: request.tool_name → request.toolName.
                    record.line = Self.edit(record.line) { message in
                        guard var request = message["request"]?.objectValue, let name = request["tool_name"] else { return }
                        request["tool_name"] = nil
                        request["toolName"] = name
                        message["request"] = .object(request)
                    }
                case "user":
                    return nil  // removed: the tool_result messages
                default:
                    break
                }
                return record
            }
        }
        let run = try await compare(old, new)
        #expect(run.status == .exited(4), "\(run.stderr)\n\(run.report)")
        #expect(run.report.contains("**Verdict: BROKEN** (exit 4)"))
        let broken = section(run.report, "Broken")
        #expect(broken.contains("`control_request/can_use_tool`: field `request.tool_name (string)` is no longer sent (in edit, tool-allow) (the codec reads a field `tool_name`)"), "\(broken)")
        #expect(broken.contains("tool-allow: new error event"), "\(broken)")
        #expect(broken.contains("edit: new error event"), "\(broken)")
        #expect(broken.contains("edit: event no longer produced"), "\(broken)")
        #expect(section(run.report, "New information Nucleic ignores").contains("`control_request/can_use_tool`: new field `request.toolName (string)` (in edit, tool-allow)"))
        // The removed message type is named, and so are the events that went with it.
        #expect(section(run.report, "Removed from the wire (broken only where the events changed or the codec reads the field)").contains("message kind `user` is no longer sent (was in edit, tool-allow)"), "\(run.report)")
        #expect(section(run.report, "Messages per scenario that changed in number").contains("- edit: user 1→0"), "\(run.report)")
    }

    /// A schema folder like `codex app-server generate-json-schema`'s, with the given methods.
    func schema(_ name: String, methods: [String], in root: URL) throws -> URL {
        let dir = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let value: JSONValue = ["definitions": ["ClientRequest": ["oneOf": .array(methods.map { method in
            ["type": "object", "properties": ["method": ["type": "string", "enum": [.string(method)]], "id": ["type": "integer"]]]
        })]]]
        try JSONWriter.string(value).write(to: dir.appendingPathComponent("ClientRequest.json"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test func codexSchemaAdditionsAreIgnoredAndARemovedMethodTheCodecSendsIsBroken() async throws {
        let old = try folder("old", backend: "codex", scenarios: ["plain"])
        let root = old.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: root) }
        let new = try folder("new", backend: "codex", scenarios: ["plain"])
        let pinned = try schema("schema-old", methods: ["turn/start", "thread/rollback"], in: root)
        let added = try schema("schema-added", methods: ["turn/start", "thread/rollback", "thread/fork"], in: root)
        let run = try await compare(old, new, backend: "codex", schemas: (pinned, added))
        #expect(run.status == .exited(3), "\(run.stderr)\n\(run.report)")
        #expect(section(run.report, "New information Nucleic ignores").contains(#"schema: new ClientRequest: method value "thread/fork""#), "\(run.report)")
        // Codex deprecates a method Nucleic never sends: removed, not broken.
        let deprecated = try schema("schema-deprecated", methods: ["turn/start"], in: root)
        let quiet = try await compare(old, new, backend: "codex", schemas: (pinned, deprecated))
        #expect(quiet.status == .exited(0), "\(quiet.report)")
        #expect(quiet.report.contains(#"- schema: ClientRequest: method value "thread/rollback" is gone"#), "\(quiet.report)")
        // A method the codec sends is gone: broken, named.
        let gone = try schema("schema-gone", methods: ["thread/rollback"], in: root)
        let broken = try await compare(old, new, backend: "codex", schemas: (pinned, gone))
        #expect(broken.status == .exited(4), "\(broken.report)")
        #expect(section(broken.report, "Broken").contains(#"schema: ClientRequest: method value "turn/start" is gone (the codec names `turn/start`)"#), "\(broken.report)")
    }

    @Test func whatCannotBeComparedFailsLoudly() async throws {
        let old = try folder("old")
        defer { try? FileManager.default.removeItem(at: old.deletingLastPathComponent()) }
        let new = try folder("new")
        try FileManager.default.removeItem(at: new.appendingPathComponent("edit.jsonl"))
        let run = try await compare(old, new)
        #expect(run.status == .exited(5))
        #expect(run.stderr.contains("drift: CANNOT JUDGE: scenarios recorded for the pinned release but not for the new one: edit"), "\(run.stderr)")
    }
}
