import Foundation
@testable import NucleicGit
import Testing

/// A repository (the shared `Fixture`: `main` checked out in the user's own tree) plus session
/// worktrees made by NucleicGit, for the integration tests.
struct IntegrationFixture {
    let base: Fixture
    let repository: Repository

    init() throws {
        base = try Fixture()
        repository = try Repository.open(base.repoPath)
    }

    var repoPath: String { base.repoPath }

    /// A session worktree on a new branch `nucleic/<id>` from `main`.
    func session(_ id: String, from: String = "main") throws -> Session {
        let path = base.worktreePath(id)
        try repository.createWorktree(name: id, path: path, branch: "nucleic/\(id)", from: from)
        return Session(id: id, branch: "nucleic/\(id)", path: path)
    }

    /// Writes files (path → text; nil deletes) under `root` and commits them with the git CLI.
    @discardableResult
    func commit(_ files: [String: String?], message: String, in root: String? = nil) throws -> String {
        let directory = root ?? repoPath
        try write(files, in: directory)
        try GitCLI.ok(["add", "-A", "--", "."], in: directory)
        try GitCLI.ok(["commit", "-q", "-m", message], in: directory)
        return try GitCLI.ok(["rev-parse", "HEAD"], in: directory).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Writes files (path → text; nil deletes) under `root` without committing.
    func write(_ files: [String: String?], in root: String? = nil) throws {
        for (path, text) in files.sorted(by: { $0.key < $1.key }) {
            if let text {
                try base.write(path, text, in: root ?? repoPath)
            } else {
                try FileManager.default.removeItem(atPath: (root ?? repoPath) + "/" + path)
            }
        }
    }

    func read(_ path: String, in root: String? = nil) throws -> String {
        try String(contentsOfFile: (root ?? repoPath) + "/" + path, encoding: .utf8)
    }

    func rev(_ spec: String, in directory: String? = nil) throws -> String {
        try GitCLI.ok(["rev-parse", spec], in: directory ?? repoPath).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `git status --porcelain` without taking optional locks (plain `git status` may rewrite
    /// the index to refresh it, which would spoil byte-for-byte comparisons).
    func status(_ directory: String? = nil, ignored: Bool = false) throws -> String {
        try GitCLI.ok(["status", "--porcelain", "--untracked-files=all"] + (ignored ? ["--ignored"] : []),
                      in: directory ?? repoPath, environment: ["GIT_OPTIONAL_LOCKS": "0"])
    }

    /// The request for `session` into `main`.
    func request(_ session: Session, _ strategy: IntegrationStrategy, worktree: Bool = true) -> IntegrationRequest {
        IntegrationRequest(sessionID: session.id, branch: session.branch, worktree: worktree ? session.path : nil, base: "main", strategy: strategy)
    }

    /// Everything a failed integration must leave as it was: every ref (`for-each-ref` and each
    /// worktree's HEAD), `git status` of each working tree, and the bytes and modes of every
    /// file in the working trees and in `.git` except the object database.
    func state(worktrees: [String]) throws -> RepositoryState {
        var refs = try GitCLI.ok(["for-each-ref", "--format=%(refname) %(objectname)"], in: repoPath)
        var statuses: [String: String] = [:]
        var files: [String: FileState] = [:]
        for directory in [repoPath] + worktrees {
            refs += directory + " HEAD " + (try GitCLI.run(["symbolic-ref", "-q", "HEAD"], in: directory).output) + (try rev("HEAD", in: directory)) + "\n"
            statuses[directory] = try status(directory, ignored: true)
            RepositoryState.collect(directory, into: &files, skipping: { $0 == directory + "/.git" })
        }
        RepositoryState.collect(repoPath + "/.git", into: &files, skipping: { $0 == repoPath + "/.git/objects" })
        return RepositoryState(refs: refs, statuses: statuses, files: files)
    }
}

struct Session {
    let id: String
    let branch: String
    let path: String
}

struct FileState: Equatable {
    let bytes: Data
    let permissions: Int
}

/// A picture of refs, statuses and file bytes; two pictures compare equal when nothing changed.
struct RepositoryState: Equatable {
    let refs: String
    let statuses: [String: String]
    let files: [String: FileState]

    /// The paths whose bytes or modes differ between two pictures (for a readable failure).
    func differences(from other: RepositoryState) -> [String] {
        Set(files.keys).union(other.files.keys).filter { files[$0] != other.files[$0] }.sorted()
    }

    static func collect(_ directory: String, into files: inout [String: FileState], skipping: (String) -> Bool) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names {
            let path = directory + "/" + name
            if skipping(path) { continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
            if isDirectory.boolValue {
                collect(path, into: &files, skipping: skipping)
            } else {
                let attributes = try? FileManager.default.attributesOfItem(atPath: path)
                let permissions = (attributes?[.posixPermissions] as? NSNumber)?.intValue ?? -1
                files[path] = FileState(bytes: FileManager.default.contents(atPath: path) ?? Data(), permissions: permissions)
            }
        }
    }
}

/// Requires `.integrated` and returns it.
func expectIntegrated(_ result: IntegrationResult, sourceLocation: SourceLocation = #_sourceLocation) throws -> Integration {
    guard case .integrated(let integration) = result else {
        Issue.record("expected .integrated, got \(result)", sourceLocation: sourceLocation)
        throw IntegrationTestFailure()
    }
    return integration
}

struct IntegrationTestFailure: Error {}

/// Requires two states to be equal, naming the files that differ.
/// `ignoring` names files (absolute paths) allowed to differ.
func expectUnchanged(_ after: RepositoryState, _ before: RepositoryState, ignoring: Set<String> = [], sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(after.refs == before.refs, sourceLocation: sourceLocation)
    #expect(after.statuses == before.statuses, sourceLocation: sourceLocation)
    #expect(after.differences(from: before).filter { !ignoring.contains($0) } == [], "files changed", sourceLocation: sourceLocation)
}
