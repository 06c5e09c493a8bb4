import Foundation
import NucleicAdapters
import NucleicProtocol
import Testing

/// The replay agent's file effects: planned from a recording's tool inputs, judged against what
/// the recorded agent reported (`RecordedFiles`: Claude's tool results, Codex's turn diffs).
@Suite struct ReplayFileEffectsTests {
    static let fixtures: [String] = ["claude", "codex", "acp"].flatMap { backend in
        ((try? Fixture.all(backend)) ?? []).map { "\(backend)/\($0.name)" }
    }

    /// The folder after every planned effect, in record order, from an empty one.
    static func replay(_ script: ReplayScript) throws -> [String: String] {
        var files: [String: String] = [:]
        let plan = ReplayFileEffects.plan(script)
        for number in plan.keys.sorted() {
            for effect in plan[number]! {
                let after = try ReplayFileEffects.apply(effect, to: files[effect.path])
                files[effect.path] = nil
                if let after { files[ReplayFileEffects.destination(of: effect)] = after }
            }
        }
        return files
    }

    @Test(arguments: fixtures)
    func everyFixtureLeavesTheRecordedRunsFiles(_ name: String) throws {
        let parts = name.split(separator: "/").map(String.init)
        let fixture = try Fixture.named(parts[0], parts[1])
        let url = Fixture.root.appendingPathComponent(name + ".jsonl")
        let script = try ReplayScript(fixture: Array(try Data(contentsOf: url)))
        let files = try Self.replay(script)
        let expected = try RecordedFiles.changes(fixture)
        #expect(Set(files.keys) == Set(expected.compactMap { $0.value == nil ? nil : $0.key }), "\(name): \(files.keys.sorted()) vs \(expected)")
        for (path, content) in files {
            #expect(try RecordedFiles.blobID(content) == expected[path] ?? nil, "\(name): \(path)")
        }
    }

    @Test func fileFixturesDoChangeFiles() throws {
        for name in ["claude/edit", "codex/file-change", "codex/file-session"] {
            let url = Fixture.root.appendingPathComponent(name + ".jsonl")
            #expect(try !Self.replay(try ReplayScript(fixture: Array(try Data(contentsOf: url)))).isEmpty, "\(name)")
        }
        let declined = Fixture.root.appendingPathComponent("codex/file-decline.jsonl")
        #expect(ReplayFileEffects.plan(try ReplayScript(fixture: Array(try Data(contentsOf: declined)))).isEmpty)
    }

    @Test func editsAndPatchesApplyAsTheToolsDo() throws {
        #expect(try ReplayFileEffects.apply(.replace(path: "a", old: "x", new: "y", all: false), to: "x x\n") == "y x\n")
        #expect(try ReplayFileEffects.apply(.replace(path: "a", old: "x", new: "y", all: true), to: "x x\n") == "y y\n")
        #expect(throws: ReplayFileEffects.ApplyError.self) { try ReplayFileEffects.apply(.replace(path: "a", old: "z", new: "y", all: false), to: "x\n") }
        #expect(throws: ReplayFileEffects.ApplyError.self) { try ReplayFileEffects.apply(.replace(path: "a", old: "z", new: "y", all: false), to: nil) }
        // A hunk found a few lines from where it says (the file moved on), as `patch` allows.
        let file = "one\ntwo\nthree\nfour\nfive\n"
        let hunks = "@@ -1,2 +1,2 @@\n three\n-four\n+FOUR\n"
        #expect(try ReplayFileEffects.apply(.patch(path: "f", hunks: hunks, moveTo: nil), to: file) == "one\ntwo\nthree\nFOUR\nfive\n")
        #expect(try ReplayFileEffects.apply(.patch(path: "f", hunks: "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n", moveTo: nil), to: "a\n") == "b")
        #expect(throws: ReplayFileEffects.ApplyError.self) {
            try ReplayFileEffects.apply(.patch(path: "f", hunks: "@@ -1 +1 @@\n-missing\n+b\n", moveTo: nil), to: "a\n")
        }
        #expect(ReplayFileEffects.destination(of: .patch(path: "f", hunks: "", moveTo: "g")) == "g")
    }

    /// A recording that wrote outside its folder (or climbed out of it) writes nothing.
    @Test func nothingOutsideTheWorkingFolder() throws {
        func script(_ path: String) throws -> ReplayScript {
            let init_ = #"{"type":"system","subtype":"init","cwd":"/rec/repo","session_id":"s","tools":[]}"#
            let use = #"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"\#(path)","content":"x"}}]}}"#
            let result = #"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}}"#
            let records = [init_, use, result].enumerated().map { ReplayScript.Record(number: $0.offset + 1, t: 0, direction: .out, line: $0.element) }
            return ReplayScript(backend: .claude, records: records)
        }
        #expect(ReplayFileEffects.plan(try script("/rec/repo/in/side.txt")) == [3: [.write(path: "in/side.txt", content: "x")]])
        #expect(ReplayFileEffects.plan(try script("/etc/passwd")).isEmpty)
        #expect(ReplayFileEffects.plan(try script("/rec/repo/../escape.txt")).isEmpty)
        #expect(ReplayFileEffects.plan(try script("/rec/repository-sibling/x")).isEmpty)
    }
}
