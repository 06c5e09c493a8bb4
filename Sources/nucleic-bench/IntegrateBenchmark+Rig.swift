#if canImport(Glibc)
import Glibc
#endif
import NucleicGit
import NucleicCommandLine

/// The two copies of the generated repository, and putting them back to a scenario's starting
/// state between passes (not timed).
extension IntegrateBenchmark {
    /// One copy: the user's tree with `main` checked out (`repo`), the session branch in its
    /// worktree (`session`), and where the timed worktree goes (`worktree`).
    final class Copy {
        let side: Side
        let root: String
        var repo: String { root + "/repo" }
        var session: String { root + "/session" }
        var worktree: String { root + "/bench-wt" }
        /// The session worktree is not at `bench/session` with a clean tree any more.
        var sessionMoved = false

        init(side: Side, root: String) {
            self.side = side
            self.root = root
        }
    }

    /// Commit ids of the generated history (hex), the same in both copies.
    struct Commits {
        var base: String
        var moved: String
        var session: String
    }

    final class Rig {
        let root: String
        let git: GitRunner
        let facts: IntegrateRepositoryGenerator.Facts
        let commits: Commits
        private let copies: [Side: Copy]
        /// The uncommitted work the snapshot scenario leaves in the session worktree: path → new
        /// bytes, nil to delete.
        private let snapshotEdits: [(path: String, bytes: [UInt8]?)]
        /// Paths each row changed in the user's tree (from Nucleic's result), for the labels.
        var changedPaths: [Row: Int] = [:]

        var snapshotChanges: Int { snapshotEdits.count }

        private init(root: String, git: GitRunner, facts: IntegrateRepositoryGenerator.Facts, commits: Commits,
                     copies: [Side: Copy], snapshotEdits: [(path: String, bytes: [UInt8]?)]) {
            self.root = root
            self.git = git
            self.facts = facts
            self.commits = commits
            self.copies = copies
            self.snapshotEdits = snapshotEdits
        }

        func copy(_ side: Side) -> Copy { copies[side]! }

        /// Generates the repository into two copies under a new scratch folder.
        static func make(_ options: Options) throws -> Rig {
            let parent = options.directory ?? getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
            var template = Array((parent + "/nucleic-bench-integrate-XXXXXX").utf8CString)
            guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
                throw BenchError(message: "cannot create a scratch folder in \(parent): \(String(cString: strerror(errno)))")
            }
            let root = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let git = GitRunner(errorFile: root + "/git-stderr")
            do {
                return try make(options, root: root, git: git)
            } catch {
                if !options.keep { _ = try? git.execute(["rm", "-rf", root], capture: false) }
                throw error
            }
        }

        private static func make(_ options: Options, root: String, git: GitRunner) throws -> Rig {
            // Both sides read the same configuration: none from the user (a global
            // `feature.manyFiles` or `core.fsmonitor` would change git's work), only what is set
            // in each copy below. Done before libgit2 is first used: it reads HOME at start-up.
            mkdir(root + "/home", 0o700)
            setenv("HOME", root + "/home", 1)
            setenv("GIT_CONFIG_NOSYSTEM", "1", 1)
            for name in ["XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_CONFIG_GLOBAL"] {
                unsetenv(name)
            }
            // libgit2's one-time start-up (tens of milliseconds) outside the first timed pass.
            LibGit2.initialize()

            let started = monotonicSeconds()
            let generated = IntegrateRepositoryGenerator.generate(fileCount: options.files, changed: options.changed, seed: UInt64(options.seed))
            let streamFile = root + "/fast-import.stream"
            try Files.write(generated.stream, to: streamFile)
            var copies: [Side: Copy] = [:]
            var ids: [String] = []
            for side in Side.allCases {
                let copy = Copy(side: side, root: root + "/" + (side == .nucleic ? "nucleic" : "git"))
                try git.execute(["git", "init", "-q", "-b", "main", copy.repo], capture: false)
                for (key, value) in [
                    ("user.name", "Nucleic Bench"), ("user.email", "bench@nucleic.invalid"), ("commit.gpgsign", "false"),
                    ("gc.auto", "0"), ("maintenance.auto", "false"), ("rebase.autoStash", "false"), ("merge.stat", "false"),
                ] {
                    try git.run(["config", key, value], in: copy.repo, capture: false)
                }
                try git.run(["fast-import", "--quiet"], in: copy.repo, input: streamFile, capture: false)
                try git.run(["reset", "-q", "--hard", "main"], in: copy.repo, capture: false)
                try git.run(["worktree", "add", "-q", copy.session, "session"], in: copy.repo, capture: false)
                ids.append(try git.value(["rev-parse", "bench/base", "bench/moved", "bench/session"], in: copy.repo))
                copies[side] = copy
            }
            unlink(streamFile)
            guard ids.allSatisfy({ $0 == ids[0] }) else {
                throw BenchError(message: "the two copies of the generated repository differ: \(ids)")
            }
            let parts = ids[0].split(separator: "\n").map(String.init)
            let commits = Commits(base: parts[0], moved: parts[1], session: parts[2])
            Output.standardError("generated \(options.files) files, two copies, in \(Format.fixed(monotonicSeconds() - started, 1)) s (\(root))")

            // Uncommitted work for the snapshot: ten text files edited, one deleted, one new.
            let paths = try git.value(["ls-tree", "-r", "--name-only", "bench/session"], in: copies[.nucleic]!.repo)
                .split(separator: "\n").map(String.init).filter { !$0.hasSuffix(".bin") }
            let step = paths.count / 12
            var edits: [(path: String, bytes: [UInt8]?)] = []
            for index in 0..<10 {
                let path = paths[index * step]
                edits.append((path, try Files.read(copies[.nucleic]!.session + "/" + path) + Array("// uncommitted edit \(index)\n".utf8)))
            }
            edits.append((paths[10 * step], nil))
            edits.append(("UNCOMMITTED.md", Array("# Work the agent left uncommitted\n".utf8)))
            return Rig(root: root, git: git, facts: generated.facts, commits: commits, copies: copies, snapshotEdits: edits)
        }

        /// Puts `copy` in `scenario`'s starting state: main checked out at `bench/base` (or
        /// `bench/moved` where main has moved) with a clean tree, the session worktree clean at
        /// `bench/session` (plus the uncommitted work, for the snapshot), no benchmark worktree.
        func reset(_ copy: Copy, for scenario: Scenario) throws {
            if access(copy.worktree, F_OK) == 0 {
                try git.run(["worktree", "remove", "--force", copy.worktree], in: copy.repo, capture: false)
            }
            if (try? git.value(["rev-parse", "--verify", "-q", "refs/heads/bench/wt"], in: copy.repo)) != nil {
                try git.run(["branch", "-q", "-D", "bench/wt"], in: copy.repo, capture: false)
            }
            let start = [.mergeNoFastForward, .rebase, .squash].contains(scenario) ? commits.moved : commits.base
            try git.run(["reset", "-q", "--hard", start], in: copy.repo, capture: false)
            if copy.sessionMoved || scenario == .snapshot {
                try git.run(["reset", "-q", "--hard", commits.session], in: copy.session, capture: false)
                copy.sessionMoved = false
            }
            if scenario == .snapshot {
                for (path, bytes) in snapshotEdits {
                    if let bytes { try Files.write(bytes, to: copy.session + "/" + path) } else { unlink(copy.session + "/" + path) }
                }
                copy.sessionMoved = true
            }
        }

        func remove() {
            _ = try? git.execute(["rm", "-rf", root], capture: false)
        }
    }
}
