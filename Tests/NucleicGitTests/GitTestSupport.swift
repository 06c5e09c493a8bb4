import Foundation
import NucleicGit
import Testing

/// The `git` CLI, run to set up history and to check what NucleicGit did. Product code never
/// runs git; tests do, because git is the judge of whether the repository is right.
struct GitCLI {
    struct Result {
        let status: Int32
        let output: String
        let error: String
    }

    /// Runs `git <arguments>` in `directory` with a fixed identity; returns whatever happened.
    @discardableResult
    static func run(_ arguments: [String], in directory: String, environment extra: [String: String] = [:], input: String? = nil) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        process.arguments = ["-c", "user.name=Test Person", "-c", "user.email=test@example.com",
                             "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
                             "-c", "core.autocrlf=false", "-c", "color.ui=false"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        for key in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR"] { environment[key] = nil }
        for (key, value) in extra { environment[key] = value }
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let stdin = Pipe()
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a large diff cannot block git.
        let outputData = out.fileHandleForReading.readDataToEndOfFile()
        let errorData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus,
                      output: String(decoding: outputData, as: UTF8.self),
                      error: String(decoding: errorData, as: UTF8.self))
    }

    /// Runs git and requires success; returns stdout.
    @discardableResult
    static func ok(_ arguments: [String], in directory: String, environment: [String: String] = [:], input: String? = nil,
                   sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try run(arguments, in: directory, environment: environment, input: input)
        #expect(result.status == 0, "git \(arguments.joined(separator: " ")) failed: \(result.error)", sourceLocation: sourceLocation)
        return result.output
    }

    /// `git fsck --strict` must report nothing wrong.
    static func expectFsckClean(_ directory: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try run(["fsck", "--strict", "--no-progress"], in: directory)
        #expect(result.status == 0, "git fsck --strict failed: \(result.output)\(result.error)", sourceLocation: sourceLocation)
        let complaints = (result.output + result.error).split(separator: "\n").filter { !$0.hasPrefix("dangling") && !$0.isEmpty }
        #expect(complaints.isEmpty, "git fsck --strict: \(complaints)", sourceLocation: sourceLocation)
    }

    /// `git worktree list --porcelain`, as records.
    static func worktrees(_ directory: String) throws -> [[String: String]] {
        let text = try ok(["worktree", "list", "--porcelain"], in: directory)
        return text.components(separatedBy: "\n\n").compactMap { block in
            var record: [String: String] = [:]
            for line in block.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 1)
                record[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
            }
            return record.isEmpty ? nil : record
        }
    }
}

/// A temporary folder, removed when the value is released.
final class TemporaryDirectory {
    let path: String

    init(_ prefix: String = "nucleic-git") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else { throw CocoaError(.fileWriteUnknown) }
        // Resolve symbolic links (libgit2 and git report resolved paths).
        path = URL(fileURLWithPath: String(cString: made)).resolvingSymlinksInPath().path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    func sub(_ relative: String) -> String { path + "/" + relative }
}

/// A repository on `main` with a few commits of text, a binary file and a .gitignore.
struct Fixture {
    let temp: TemporaryDirectory
    let repoPath: String
    let worktreesRoot: String

    init() throws {
        temp = try TemporaryDirectory()
        repoPath = temp.sub("repo")
        worktreesRoot = temp.sub("home/worktrees/shop")
        try FileManager.default.createDirectory(atPath: repoPath, withIntermediateDirectories: true)
        try GitCLI.ok(["init", "-q", "-b", "main"], in: repoPath)
        try write("README.md", "# Shop\n\nA small shop.\n")
        try write("src/cart.swift", (1...40).map { "let line\($0) = \($0)\n" }.joined())
        try write("src/price.swift", "func price() -> Int {\n    return 42\n}\n")
        try write("docs/guide.md", (1...30).map { "Guide paragraph \($0) with enough words to be similar.\n" }.joined())
        try write(".gitignore", "*.log\nbuild/\n")
        try write("tools/run.sh", "#!/bin/sh\necho run\n")
        try write("placeholder/.keep", "")
        try writeBytes("assets/logo.bin", [0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x03, 0x00, 0xff])
        try GitCLI.ok(["add", "-A"], in: repoPath)
        try GitCLI.ok(["commit", "-q", "-m", "first"], in: repoPath)
        try write("src/price.swift", "func price() -> Int {\n    return 43\n}\n")
        try GitCLI.ok(["commit", "-q", "-am", "second"], in: repoPath)
    }

    func write(_ relative: String, _ text: String, in root: String? = nil) throws {
        let path = (root ?? repoPath) + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    func writeBytes(_ relative: String, _ bytes: [UInt8], in root: String? = nil) throws {
        let path = (root ?? repoPath) + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    func tip(_ branch: String = "main") throws -> String {
        try GitCLI.ok(["rev-parse", "refs/heads/\(branch)"], in: repoPath).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func branchExistsInGit(_ branch: String) throws -> Bool {
        try GitCLI.run(["rev-parse", "--verify", "--quiet", "refs/heads/\(branch)"], in: repoPath).status == 0
    }

    var adminRoot: String { repoPath + "/.git/worktrees" }

    func worktreePath(_ session: String) -> String { worktreesRoot + "/" + session }
}

func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

/// Runs `body`, requiring it to throw a `GitError` with `code`; returns the error.
@discardableResult
func expectGitError(_ code: GitError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) -> GitError? {
    do {
        try body()
        Issue.record("expected GitError \(code), nothing was thrown", sourceLocation: sourceLocation)
        return nil
    } catch let error as GitError {
        #expect(error.code == code, "expected \(code), got \(error.code): \(error)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected GitError \(code), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
