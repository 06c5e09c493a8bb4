import Foundation
import NucleicProtocol
import NucleicTestSupport
import Testing

/// The approval card every client shows: diffs of file edits, whole commands, numbered options.
@Suite struct ApprovalContentTests {
    static let capabilities = BackendCapabilities(
        canModifyToolInput: true, canAnswerQuestions: true, canAcceptForSession: false, questionsNeedPlanMode: false,
        canInterrupt: true, canResume: true)

    static func request(_ tool: String, _ input: JSONValue, question: StructuredQuestion? = nil) -> ApprovalRequest {
        ApprovalRequest(id: ApprovalID("a"), toolCallID: nil, toolName: tool, input: input, risk: .write,
                        capabilities: capabilities, question: question)
    }

    /// `diff -u` of two files, without its two header lines (the hunks only).
    static func diffU(_ old: String, _ new: String) throws -> [String] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-udiff-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try old.write(toFile: folder + "/a", atomically: true, encoding: .utf8)
        try new.write(toFile: folder + "/b", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/diff")
        process.arguments = ["-u", folder + "/a", folder + "/b"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Array(String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init).dropFirst(2).dropLast())
    }

    /// GNU diff is the judge: same hunks (headers, context, line order) for a spread of edits.
    @Test func hunksEqualGNUDiff() throws {
        let base = (1...30).map { "line \($0)\n" }.joined()
        var cases: [(String, String)] = [
            (base, base.replacingOccurrences(of: "line 5\n", with: "line five\n")),
            (base, base.replacingOccurrences(of: "line 5\n", with: "").replacingOccurrences(of: "line 25\n", with: "line 25\nextra\n")),
            (base, base.replacingOccurrences(of: "line 10\n", with: "line 10\nnew a\nnew b\n")),
            ("", "only\nnew\n"),
            ("a\nb\nc\n", ""),
            ("a\nb\nc\nd\n", "a\nx\nc\ny\n"),
            (base, "line 1\n" + base),
        ]
        var random = SeededGenerator(seed: 0xD1FF)
        for _ in 0..<20 {
            var lines = (1...25).map { "l\($0 % 7)" }
            for _ in 0..<4 {
                let i = Int.random(in: 0..<lines.count, using: &random)
                if Bool.random(using: &random) { lines.remove(at: i) } else { lines.insert("n\(i)", at: i) }
            }
            cases.append(((1...25).map { "l\($0 % 7)\n" }.joined(), lines.map { $0 + "\n" }.joined()))
        }
        for (old, new) in cases {
            #expect(UnifiedDiff.hunks(old: old, new: new) == (try Self.diffU(old, new)), "\(old.debugDescription) → \(new.debugDescription)")
        }
        #expect(UnifiedDiff.hunks(old: base, new: base).isEmpty)
    }

    @Test func aWriteIsANewFilesDiff() {
        let card = ApprovalContent(Self.request("Write", ["file_path": "/w/s/notes.txt", "content": "one\ntwo\n"]), cwd: "/w/s")
        #expect(card.lines == ["Write notes.txt", "--- /dev/null", "+++ b/notes.txt", "@@ -0,0 +1,2 @@", "+one", "+two"])
    }

    @Test func anEditIsItsChangeAndLongOnesAreCutWithACount() {
        let card = ApprovalContent(Self.request("Edit", ["file_path": "/w/s/a.swift", "old_string": "let a = 1\n", "new_string": "let a = 2\n"]), cwd: "/w/s")
        #expect(card.lines == ["Edit a.swift", "--- a/a.swift", "+++ b/a.swift", "@@ -1 +1 @@", "-let a = 1", "+let a = 2"])
        let long = (1...100).map { "line \($0)\n" }.joined()
        let cut = ApprovalContent(Self.request("Write", ["file_path": "/x/big.txt", "content": .string(long)]), maximumLines: 10)
        #expect(cut.body.count == 10)
        #expect(cut.omittedLines == 93)  // 3 header lines + 100 added, 10 shown
        #expect(cut.lines.last == "… 93 more lines")
        let multi = ApprovalContent(Self.request("MultiEdit", ["file_path": "m.txt", "edits": [
            ["old_string": "a", "new_string": "b"], ["old_string": "c", "new_string": "d"]]]))
        #expect(multi.lines == ["Edit m.txt (2 changes)", "--- a/m.txt", "+++ b/m.txt", "@@ -1 +1 @@", "-a", "+b", "@@ -1 +1 @@", "-c", "+d"])
    }

    @Test func codexFileChangesAndCommandsInFull() {
        let patch = ApprovalContent(Self.request("apply_patch", ["changes": [
            ["path": "/r/new.txt", "kind": ["type": "add"], "diff": "hello\n"],
            ["path": "/r/old.txt", "kind": ["type": "update", "move_path": "/r/moved.txt"], "diff": "@@ -1 +1 @@\n-x\n+y\n"],
        ]]), cwd: "/r")
        #expect(patch.lines == ["Change 2 files", "--- /dev/null", "+++ b/new.txt", "@@ -0,0 +1 @@", "+hello",
                                "--- a/old.txt", "+++ b/moved.txt", "@@ -1 +1 @@", "-x", "+y"])
        let command = ApprovalContent(Self.request("Bash", ["command": "npm test &&\n  git push --force origin main", "description": "test and push"]))
        #expect(command.lines == ["Bash", "$ npm test &&", "    git push --force origin main", "# test and push"])
    }

    static let color = StructuredQuestion.Item(question: "Which color?", options: [
        .init(label: "Red", description: "warm"), .init(label: "Blue")], allowsOther: true)

    @Test func questionsAreNumberedAndAnsweredByNumberLabelOrText() throws {
        let card = ApprovalContent(Self.request("AskUserQuestion", [:], question: StructuredQuestion(questions: [Self.color])))
        #expect(card.lines == ["Question", "? Which color?", "  1. Red — warm", "  2. Blue", "  or type an answer of your own"])
        #expect(try QuestionAnswer.resolve("2", for: Self.color) == ["Blue"])
        #expect(try QuestionAnswer.resolve(" red ", for: Self.color) == ["Red"])
        #expect(try QuestionAnswer.resolve("green, please", for: Self.color) == ["green, please"])
        var closed = Self.color
        closed.allowsOther = false
        #expect(throws: ShapeError.self) { try QuestionAnswer.resolve("green", for: closed) }
        #expect(throws: ShapeError.self) { try QuestionAnswer.resolve("3", for: closed) }
        var multi = closed
        multi.multiSelect = true
        #expect(try QuestionAnswer.resolve("1, blue", for: multi) == ["Red", "Blue"])
        // The wire keeps the flag (and leaves it out when false).
        let json = StructuredQuestion(questions: [Self.color]).json
        #expect(try StructuredQuestion(json: json).questions[0].allowsOther)
        #expect(StructuredQuestion(questions: [closed]).json["questions"]?[0]?["allowsOther"] == nil)
    }
}
