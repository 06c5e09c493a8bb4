import Foundation
@testable import NucleicGit
import Testing

/// The files and index of a worktree made by NucleicGit, compared with `git worktree add`'s of
/// the same commit: the same entries (mode, object, stage, path), the same files on disk (type,
/// permission bits, bytes, link targets), and a clean `git status` in both.
@Suite struct WorktreeCheckoutTests {
    @Test func matchesGitWorktreeAddEntryByEntryAndFileByFile() throws {
        let fixture = try CheckoutFixture()
        try fixture.commitVariedTree()
        try fixture.expectSameCheckoutAsGit()
    }

    @Test func matchesGitWhenTheCheckoutRunsInTwoHalves() throws {
        // Above Repository.parallelCheckoutMinimumFiles: two handles check out halves at once.
        let fixture = try CheckoutFixture()
        for folder in 0..<21 {
            for file in 0..<100 {
                try fixture.write("top\(folder)/\(file % 3)/f\(file).txt", "\(folder) \(file)\n")
            }
        }
        try fixture.write("top-level file.txt", "at the top\n")
        try fixture.commitVariedTree()
        try fixture.expectSameCheckoutAsGit(minimumFiles: Repository.parallelCheckoutMinimumFiles)
    }

    @Test func matchesGitWhenAttributesFilterTheFiles() throws {
        let fixture = try CheckoutFixture()
        try fixture.commitVariedTree()
        try fixture.write("deep/er/.gitattributes", "*.txt text eol=crlf\n*.id ident\n")
        try fixture.write("deep/er/notes.txt", "one\ntwo\nthree\n")
        try fixture.write("deep/er/version.id", "$Id$\n")
        try fixture.commit("attributes")
        let (nucleic, _) = try fixture.expectSameCheckoutAsGit()
        // The filters ran: CRLF line ends and the expanded ident.
        #expect(try Data(contentsOf: URL(fileURLWithPath: nucleic + "/deep/er/notes.txt")) == Data("one\r\ntwo\r\nthree\r\n".utf8))
        #expect(try String(contentsOfFile: nucleic + "/deep/er/version.id", encoding: .utf8).hasPrefix("$Id: "))
    }

    @Test func matchesGitWhenInfoAttributesOrAutocrlfApply() throws {
        let fixture = try CheckoutFixture()
        try fixture.commitVariedTree()
        try fixture.write(".git/info/attributes", "*.md text eol=crlf\n")
        let (first, _) = try fixture.expectSameCheckoutAsGit(name: "info")
        #expect(try Data(contentsOf: URL(fileURLWithPath: first + "/README.md")).contains(0x0d))
        try FileManager.default.removeItem(atPath: fixture.repoPath + "/.git/info/attributes")
        try GitCLI.ok(["config", "core.autocrlf", "true"], in: fixture.repoPath)
        let (second, _) = try fixture.expectSameCheckoutAsGit(name: "autocrlf", gitOptions: ["-c", "core.autocrlf=true"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: second + "/README.md")).contains(0x0d))
    }
}

/// A repository for checkout comparisons: many folders, nested deeply, executable, binary,
/// empty and non-ASCII files, and a symbolic link.
struct CheckoutFixture {
    let temp: TemporaryDirectory
    let repoPath: String

    init() throws {
        temp = try TemporaryDirectory("nucleic-checkout")
        repoPath = temp.sub("repo")
        try FileManager.default.createDirectory(atPath: repoPath, withIntermediateDirectories: true)
        try GitCLI.ok(["init", "-q", "-b", "main"], in: repoPath)
    }

    func write(_ relative: String, _ text: String) throws {
        let path = repoPath + "/" + relative
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
    }

    func commit(_ message: String) throws {
        try GitCLI.ok(["add", "-A"], in: repoPath)
        try GitCLI.ok(["commit", "-q", "-m", message], in: repoPath)
    }

    func commitVariedTree() throws {
        for folder in 0..<24 {
            for file in 0..<(folder % 5 + 1) {
                try write("f\(folder)/sub\(file % 2)/file\(file).swift", (0...(folder + file)).map { "let v\($0) = \(folder * file)\n" }.joined())
            }
        }
        try write("README.md", "# Checkout\n\nLines\nof text\n")
        try write("empty", "")
        try write("a/b/c/d/e/f/g/deep.txt", "deep\n")
        try write("naïve/ünïcode ✓.txt", "non-ASCII name\n")
        try write("tools/run.sh", "#!/bin/sh\necho run\n")
        try Data([0x00, 0xff, 0x10, 0x00, 0x0d, 0x0a, 0x0a]).write(to: URL(fileURLWithPath: repoPath + "/f3/blob.bin"))
        try FileManager.default.createSymbolicLink(atPath: repoPath + "/f4/link", withDestinationPath: "../README.md")
        try commit("first")
        try GitCLI.ok(["update-index", "--chmod=+x", "tools/run.sh"], in: repoPath)
        try write("f1/sub0/file0.swift", "changed\n")
        try GitCLI.ok(["commit", "-q", "-am", "second"], in: repoPath)
    }

    /// Makes worktree `name` with NucleicGit and `name-git` with `git worktree add` from main,
    /// checks they agree, and returns both paths.
    @discardableResult
    func expectSameCheckoutAsGit(name: String = "wt", gitOptions: [String] = [], minimumFiles: Int = 30,
                                 sourceLocation: SourceLocation = #_sourceLocation) throws -> (String, String) {
        let nucleic = temp.sub("worktrees/\(name)")
        let git = temp.sub("worktrees/\(name)-git")
        try Repository.open(repoPath).createWorktree(name: name, path: nucleic, branch: "nucleic/\(name)", from: "main")
        // (GitCLI passes core.autocrlf=false: `gitOptions` restates the repository's own.)
        let result = try GitCLI.run(gitOptions + ["worktree", "add", "-q", "-b", "git/\(name)", git, "main"], in: repoPath)
        #expect(result.status == 0, "git worktree add: \(result.error)", sourceLocation: sourceLocation)
        #expect(try GitCLI.ok(gitOptions + ["status", "--porcelain", "--untracked-files=all"], in: nucleic) == "", sourceLocation: sourceLocation)
        #expect(try GitCLI.ok(gitOptions + ["status", "--porcelain", "--untracked-files=all"], in: git) == "", sourceLocation: sourceLocation)
        let entries = try GitCLI.ok(["ls-files", "--stage"], in: nucleic)
        #expect(!entries.isEmpty, sourceLocation: sourceLocation)
        #expect(entries == (try GitCLI.ok(["ls-files", "--stage"], in: git)), sourceLocation: sourceLocation)
        let files = try Self.snapshot(nucleic)
        #expect(files.count >= minimumFiles, sourceLocation: sourceLocation)
        #expect(files == (try Self.snapshot(git)), sourceLocation: sourceLocation)
        return (nucleic, git)
    }

    /// Every path under `root` but the `.git` file: its type, permission bits and bytes (or link target).
    static func snapshot(_ root: String) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: root)
        while let relative = enumerator?.nextObject() as? String {
            if relative == ".git" { continue }
            let path = root + "/" + relative
            var info = stat()
            guard lstat(path, &info) == 0 else { throw CocoaError(.fileReadUnknown) }
            switch info.st_mode & S_IFMT {
            case S_IFDIR: files[relative] = "folder"
            case S_IFLNK: files[relative] = "link -> " + (try FileManager.default.destinationOfSymbolicLink(atPath: path))
            case S_IFREG:
                let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
                files[relative] = "file \(String(info.st_mode & 0o777, radix: 8)) " + bytes.base64EncodedString()
            default: files[relative] = "other"
            }
        }
        return files
    }
}
