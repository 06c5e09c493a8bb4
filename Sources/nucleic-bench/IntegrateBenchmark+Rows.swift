#if canImport(Glibc)
import Glibc
#endif
import NucleicGit

/// The timed passes of `nucleic-bench integrate` and the checks after them. Nucleic's side is one
/// `@inline(never)` function per operation, a symbol of its own for profilers
/// (`valgrind --tool=callgrind --toggle-collect='*runIntegrator*'`).
extension IntegrateBenchmark {
    static let worktreeName = "bench-wt"
    static let worktreeBranch = "bench/wt"
    static let sessionID = "bench"

    // MARK: Nucleic

    /// `Repository.open` + `createWorktree`: a branch at main's tip and its worktree checked out.
    @inline(never)
    static func runCreateWorktree(repo: String, path: String) throws -> Double {
        let start = monotonicSeconds()
        // (In a closure: the handle is freed before the clock stops, as git frees at exit.)
        try { try Repository.open(repo).createWorktree(name: worktreeName, path: path, branch: worktreeBranch, from: "main") }()
        return monotonicSeconds() - start
    }

    @inline(never)
    static func runRemoveWorktree(repo: String) throws -> Double {
        let start = monotonicSeconds()
        try { try Repository.open(repo).removeWorktree(name: worktreeName) }()
        return monotonicSeconds() - start
    }

    /// `Repository.open` + `Integrator.integrate` of branch `session` into `main` (checked out in
    /// `repo`), without a session worktree: the branch as it is, no snapshot.
    @inline(never)
    static func runIntegrator(repo: String, strategy: IntegrationStrategy) throws -> (seconds: Double, result: IntegrationResult) {
        let start = monotonicSeconds()
        let result = try {
            try Integrator(Repository.open(repo)).integrate(branch: "session", into: "main", strategy: strategy, sessionID: sessionID, worktree: nil)
        }()
        return (monotonicSeconds() - start, result)
    }

    @inline(never)
    static func runSnapshot(repo: String, session: String) throws -> (seconds: Double, commit: OID?) {
        let start = monotonicSeconds()
        let commit = try { try Integrator(Repository.open(repo)).snapshot(worktree: session, sessionID: sessionID) }()
        return (monotonicSeconds() - start, commit)
    }

    // MARK: Both sides

    static func strategy(_ scenario: Scenario) -> IntegrationStrategy? {
        switch scenario {
        case .mergeFastForward: .merge(noFastForward: false)
        case .mergeNoFastForward: .merge(noFastForward: true)
        case .rebase: .rebase
        case .squash: .squash(message: "Integrate session \(sessionID)")
        case .worktree, .snapshot: nil
        }
    }

    static func row(_ scenario: Scenario) -> Row {
        switch scenario {
        case .worktree: .worktreeAdd
        case .mergeFastForward: .mergeFastForward
        case .mergeNoFastForward: .mergeNoFastForward
        case .rebase: .rebase
        case .squash: .squash
        case .snapshot: .snapshot
        }
    }
}

extension IntegrateBenchmark.Rig {
    typealias Row = IntegrateBenchmark.Row

    /// Times `scenario` on `copy` (already reset); the worktree scenario times two rows and checks
    /// the new worktree between them.
    func measure(_ scenario: IntegrateBenchmark.Scenario, on copy: IntegrateBenchmark.Copy) throws -> [(Row, Double)] {
        let nucleic = copy.side == .nucleic
        switch scenario {
        case .worktree:
            let add = nucleic
                ? try IntegrateBenchmark.runCreateWorktree(repo: copy.repo, path: copy.worktree)
                : try git.timed(["worktree", "add", "-q", "-b", IntegrateBenchmark.worktreeBranch, copy.worktree, "main"], in: copy.repo)
            try checkNewWorktree(copy)
            let remove = nucleic
                ? try IntegrateBenchmark.runRemoveWorktree(repo: copy.repo)
                : try git.timed(["worktree", "remove", "--force", copy.worktree], in: copy.repo)
            guard access(copy.worktree, F_OK) != 0,
                  !(try git.value(["worktree", "list", "--porcelain"], in: copy.repo)).contains(IntegrateBenchmark.worktreeName)
            else { throw BenchError(message: "worktree \(copy.worktree) is still there after the \(copy.side) side removed it") }
            try git.run(["branch", "-q", "-D", IntegrateBenchmark.worktreeBranch], in: copy.repo, capture: false)
            return [(.worktreeAdd, add), (.worktreeRemove, remove)]

        case .snapshot:
            let seconds: Double
            if nucleic {
                let (time, commit) = try IntegrateBenchmark.runSnapshot(repo: copy.repo, session: copy.session)
                guard commit != nil else { throw BenchError(message: "Integrator.snapshot found nothing to commit in \(copy.session)") }
                seconds = time
            } else {
                seconds = try git.timed(["add", "-A"], in: copy.session)
                    + git.timed(["commit", "-q", "-m", "Snapshot of session \(IntegrateBenchmark.sessionID)"], in: copy.session)
            }
            return [(.snapshot, seconds)]

        case .mergeFastForward, .mergeNoFastForward, .rebase, .squash:
            let row = IntegrateBenchmark.row(scenario)
            if nucleic {
                let (seconds, result) = try IntegrateBenchmark.runIntegrator(repo: copy.repo, strategy: IntegrateBenchmark.strategy(scenario)!)
                guard case .integrated(let integration) = result else {
                    throw BenchError(message: "\(scenario.rawValue): the Integrator did not integrate: \(result)")
                }
                changedPaths[row] = integration.changedPaths.count
                return [(row, seconds)]
            }
            let seconds: Double
            switch scenario {
            case .mergeFastForward:
                seconds = try git.timed(["merge", "-q", "--ff-only", "--no-stat", "session"], in: copy.repo)
            case .mergeNoFastForward:
                seconds = try git.timed(["merge", "-q", "--no-ff", "--no-stat", "-m", "Merge branch 'session' into main", "session"], in: copy.repo)
            case .rebase:
                // git rebases the branch where it is checked out (the session worktree), then
                // the user's tree fast-forwards to it.
                copy.sessionMoved = true
                seconds = try git.timed(["rebase", "-q", "main"], in: copy.session)
                    + git.timed(["merge", "-q", "--ff-only", "--no-stat", "session"], in: copy.repo)
            default:
                seconds = try git.timed(["merge", "-q", "--squash", "--no-stat", "session"], in: copy.repo)
                    + git.timed(["commit", "-q", "-m", "Integrate session \(IntegrateBenchmark.sessionID)"], in: copy.repo)
            }
            return [(row, seconds)]
        }
    }

    /// Checks what `scenario` left on `copy` with git, and returns the tree each row produced,
    /// which must be the same on both sides.
    func check(_ scenario: IntegrateBenchmark.Scenario, on copy: IntegrateBenchmark.Copy) throws -> [(Row, String)] {
        let what = "\(scenario.rawValue) on the \(copy.side) side"
        switch scenario {
        case .worktree: return []
        case .snapshot:
            try expectClean(copy.session, what)
            let line = try git.value(["rev-list", "--parents", "-n", "1", "HEAD"], in: copy.session).split(separator: " ")
            guard line.count == 2, line[1] == commits.session else { throw BenchError(message: "\(what): HEAD is not one commit on top of the session tip: \(line)") }
            return [(.snapshot, try git.value(["rev-parse", "HEAD^{tree}"], in: copy.session))]
        case .mergeFastForward, .mergeNoFastForward, .rebase, .squash:
            // The user's tree moved with main: nothing staged, changed or untracked.
            try expectClean(copy.repo, what)
            let start = scenario == .mergeFastForward ? commits.base : commits.moved
            let lines = try git.value(["rev-list", "--parents", "\(start)..main"], in: copy.repo)
                .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
            let expected: Bool = switch scenario {
            case .mergeFastForward: lines.first?.first == commits.session
            case .mergeNoFastForward: lines.first.map { $0.count == 3 && $0[1] == commits.moved && $0[2] == commits.session } ?? false
            case .rebase: lines.count == facts.sessionCommits && lines.allSatisfy { $0.count == 2 } && lines.last?[1] == commits.moved
            default: lines.count == 1 && lines[0].count == 2 && lines[0][1] == commits.moved
            }
            guard expected else { throw BenchError(message: "\(what): main's new history is not what the strategy makes: \(lines)") }
            return [(IntegrateBenchmark.row(scenario), try git.value(["rev-parse", "main^{tree}"], in: copy.repo))]
        }
    }

    private func checkNewWorktree(_ copy: IntegrateBenchmark.Copy) throws {
        let head = try git.value(["rev-parse", "HEAD", "--symbolic-full-name", "HEAD"], in: copy.worktree).split(separator: "\n")
        guard head.count == 2, head[0] == commits.base, head[1] == "refs/heads/" + IntegrateBenchmark.worktreeBranch else {
            throw BenchError(message: "the \(copy.side) side's new worktree has \(head) checked out, not \(IntegrateBenchmark.worktreeBranch) at main")
        }
        try expectClean(copy.worktree, "the \(copy.side) side's new worktree")
    }

    private func expectClean(_ directory: String, _ what: String) throws {
        let status = try git.value(["--no-optional-locks", "status", "--porcelain", "--untracked-files=all"], in: directory)
        guard status.isEmpty else {
            throw BenchError(message: "\(what): \(directory) is not clean:\n\(status.split(separator: "\n").prefix(10).joined(separator: "\n"))")
        }
    }
}
