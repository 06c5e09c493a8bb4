#if canImport(Glibc)
import Glibc
#endif
import NucleicGit
import NucleicCommandLine

/// `nucleic-bench integrate`: session worktrees and the three integration strategies through
/// NucleicGit (libgit2), next to the `git` commands that do the same work, on two identical
/// copies of a generated repository.
enum IntegrateBenchmark: BenchCommand {
    static let name = "integrate"
    static let summary = "worktrees and merge/rebase/squash on a generated 10,000-file repository, vs the git CLI"
    static let usage = """
        usage: nucleic-bench integrate [--files N] [--changed N] [--repeat N] [--seed N] [--only ROWS]
                                       [--no-git] [--directory DIR] [--keep]

        Generates a repository from a seed (git fast-import; not timed): 10,000 files in nested
        folders, three commits of history on main, a session branch of three commits that changes
        50 files (edits, renames, deletions, new files, a binary file, an executable bit, files main
        also edits), and two commits in which main moves on elsewhere. Two identical copies are
        made, each with main checked out in its own tree and the session branch in a worktree.
        Then, best of N passes each, Nucleic on one copy and the git CLI on the other, both reset
        to the same commits before every pass:
          worktree      Repository.createWorktree          git worktree add -b BRANCH PATH main
                        Repository.removeWorktree          git worktree remove --force PATH
          merge-ff      Integrator .merge (fast-forward)   git merge --ff-only
          merge-no-ff   .merge(noFastForward:), main moved git merge --no-ff
          rebase        .rebase, main moved                git rebase (in the session worktree)
                                                           + git merge --ff-only
          squash        .squash, main moved                git merge --squash + git commit
          snapshot      Integrator.snapshot                git add -A + git commit (in the session
                                                           worktree, 12 files changed)
        Each strategy moves main checked out in the user's tree. Every result is checked with git
        (the history's shape, the same tree on both sides, a clean status). Prints wall times and
        nucleic/git (below 1: Nucleic is faster). Not timed: generating, resetting, checking.

        Options:
          --files N        files in the repository (default 10000)
          --changed N      files the session changes (default 50)
          --repeat N       rounds, each row's best pass kept (default 5)
          --seed N         generator seed (default 1): the same seed gives the same commits
          --only ROWS      run only these, comma-separated: worktree,merge-ff,merge-no-ff,rebase,squash,snapshot
          --no-git         Nucleic's side only (for profilers)
          --directory DIR  where to make the scratch folder (default $TMPDIR or /tmp)
          --keep           keep the scratch folder (its path is printed)
        """

    /// What each round runs, in order. `worktree` times two rows: add, then remove.
    enum Scenario: String, CaseIterable {
        case worktree, mergeFastForward = "merge-ff", mergeNoFastForward = "merge-no-ff", rebase, squash, snapshot
    }

    enum Row: CaseIterable {
        case worktreeAdd, worktreeRemove, mergeFastForward, mergeNoFastForward, rebase, squash, snapshot
    }

    enum Side: CaseIterable {
        case nucleic, git
    }

    struct Options {
        var files = 10_000
        var changed = 50
        var repeats = 5
        var seed = 1
        var scenarios = Scenario.allCases
        var git = true
        var directory: String?
        var keep = false

        init(_ arguments: [String]) throws {
            let args = try ArgumentParser(arguments, valued: ["files", "changed", "repeat", "seed", "only", "directory"],
                                          boolean: ["no-git", "keep"], short: [:], allowsPositionals: false, usage: usage)
            files = try args.integer("files", default: files, in: 200...1_000_000, usage: usage)
            changed = try args.integer("changed", default: changed, in: 12...10_000, usage: usage)
            guard changed * 4 <= files else {
                throw UsageError(message: "--changed \(changed) is too many for --files \(files): at most a quarter of the files", usage: usage)
            }
            repeats = try args.integer("repeat", default: repeats, in: 1...100, usage: usage)
            seed = try args.integer("seed", default: seed, in: 0...Int.max, usage: usage)
            git = !args.flag("no-git")
            directory = args["directory"]
            keep = args.flag("keep")
            if let list = args["only"] {
                let names = list.split(separator: ",").map(String.init)
                guard !names.isEmpty, names.allSatisfy({ Scenario(rawValue: $0) != nil }) else {
                    let all = Scenario.allCases.map(\.rawValue).joined(separator: ",")
                    throw UsageError(message: "--only takes scenarios from \(all), not '\(list)'", usage: usage)
                }
                scenarios = Scenario.allCases.filter { names.contains($0.rawValue) }
            }
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments)
        let rig = try Rig.make(options)
        defer { if options.keep { Output.standardError("kept \(rig.root)") } else { rig.remove() } }

        let sides: [Side] = options.git ? [.nucleic, .git] : [.nucleic]
        var best: [Row: [Side: Double]] = [:]
        var expectedTrees: [Row: String] = [:]
        for round in 0..<options.repeats {
            // Alternate which side goes first, so that neither always runs on a cache the
            // other just warmed.
            let order = round % 2 == 0 ? sides : sides.reversed()
            for scenario in options.scenarios {
                for side in order {
                    let copy = rig.copy(side)
                    try rig.reset(copy, for: scenario)
                    for (row, seconds) in try rig.measure(scenario, on: copy) {
                        best[row, default: [:]][side] = min(best[row]?[side] ?? .infinity, seconds)
                    }
                    // The same tree on both sides and in every pass: the same work was done.
                    for (row, tree) in try rig.check(scenario, on: copy) {
                        if let expected = expectedTrees[row], expected != tree {
                            throw BenchError(message: "\(row) gave tree \(tree) on the \(side) side, not \(expected) as before: the sides did different work")
                        }
                        expectedTrees[row] = tree
                    }
                }
            }
        }

        let facts = rig.facts
        Output.standardOutput("""
            integrate: \(facts.files) files in \(facts.folders) folders (\(Format.fixed(Double(facts.bytes) / 1e6, 1)) MB), \
            a session changing \(facts.sessionFiles) files in \(facts.sessionCommits) commits, main moved \(facts.movedFiles) files; \
            best of \(options.repeats); libgit2 \(LibGit2.version), git \(rig.git.version())

            \(table(best, rig: rig))

            """)
        if options.git { Output.standardOutput(summary(best)) }
        return 0
    }

    static func label(_ row: Row, rig: Rig) -> String {
        let paths = rig.changedPaths[row].map { " (\($0) paths)" } ?? ""
        return switch row {
        case .worktreeAdd: "worktree add, new branch (\(rig.facts.files) files)"
        case .worktreeRemove: "worktree remove"
        case .mergeFastForward: "merge, fast-forward\(paths)"
        case .mergeNoFastForward: "merge --no-ff, main moved\(paths)"
        case .rebase: "rebase + fast-forward, main moved\(paths)"
        case .squash: "squash + commit, main moved\(paths)"
        case .snapshot: "snapshot of a session worktree (\(rig.snapshotChanges) files)"
        }
    }

    static func shortName(_ row: Row) -> String {
        switch row {
        case .worktreeAdd: "worktree add"
        case .worktreeRemove: "remove"
        case .mergeFastForward: "merge ff"
        case .mergeNoFastForward: "merge --no-ff"
        case .rebase: "rebase"
        case .squash: "squash"
        case .snapshot: "snapshot"
        }
    }

    static func table(_ best: [Row: [Side: Double]], rig: Rig) -> String {
        var rows = [["", "nucleic", "git", "nucleic/git"]]
        for row in Row.allCases {
            guard let times = best[row] else { continue }
            let nucleic = times[.nucleic], git = times[.git]
            rows.append([label(row, rig: rig), nucleic.map(milliseconds) ?? "-", git.map(milliseconds) ?? "-",
                         nucleic.flatMap { n in git.map { Format.fixed(n / $0, 2) + "x" } } ?? "-"])
        }
        return Format.table(rows)
    }

    /// `integrate: nucleic/git wall time (below 1 = nucleic faster): worktree add 1.02x, …; geometric mean 0.71x`
    static func summary(_ best: [Row: [Side: Double]]) -> String {
        var parts: [String] = []
        var logSum = 0.0, count = 0
        for row in Row.allCases {
            guard let nucleic = best[row]?[.nucleic], let git = best[row]?[.git] else { continue }
            parts.append("\(shortName(row)) \(Format.fixed(nucleic / git, 2))x")
            logSum += log(nucleic / git)
            count += 1
        }
        let mean = count > 0 ? "; geometric mean \(Format.fixed(exp(logSum / Double(count)), 2))x" : ""
        return "integrate: nucleic/git wall time (below 1 = nucleic faster): " + parts.joined(separator: ", ") + mean
    }

    static func milliseconds(_ seconds: Double) -> String { Format.fixed(seconds * 1000, 1) + " ms" }
}
