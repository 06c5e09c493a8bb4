import CGit2
import Glibc
import NucleicSystem

/// A new worktree's checkout in two halves at once, one per core.
///
/// libgit2 checks out one file after another. For a large tree, the top-level entries are split
/// into two groups of about the same number of files, and each group is checked out by its own
/// repository handle on its own thread (`git_checkout_head` with those paths, the index kept in
/// memory); the second handle's index entries are then added to the first's, which is written
/// once. Each handle has its own object and delta-base caches, so neither waits on the other.
/// The files and the index are the ones one checkout of the whole tree writes
/// (`WorktreeCheckoutTests` compares them with `git worktree add`).
extension Repository {
    /// Trees with fewer files are checked out in one pass.
    static let parallelCheckoutMinimumFiles = 2_000

    /// The two groups of top-level names to check out side by side, or nil for one pass (a
    /// small tree, one processor, or no split with each side at least a quarter of the files).
    static func checkoutHalves(_ survey: TreeSurvey?) -> ([String], [String])? {
        guard let survey, sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 else { return nil }
        let total = survey.files.values.reduce(0, +)
        guard total >= parallelCheckoutMinimumFiles else { return nil }
        var first: [String] = [], second: [String] = []
        var firstCount = 0, secondCount = 0
        for (name, count) in survey.files.sorted(by: { ($0.value, $1.key) > ($1.value, $0.key) }) {
            if firstCount <= secondCount { first.append(name); firstCount += count } else { second.append(name); secondCount += count }
        }
        guard min(firstCount, secondCount) * 4 >= total else { return nil }
        return (first, second)
    }

    /// Checks out HEAD of the worktree at `path` (whose index is empty and not yet written), as
    /// `halves`, one on another thread; writes the index once.
    static func checkOutInHalves(worktree path: String, halves: ([String], [String]), disableFilters: Bool) throws {
        let results = BlockingQueue<Result<HandleBox, any Error>>()
        let second = halves.1
        let started = startDetachedThread(name: "nucleic-checkout") {
            _ = results.push(Result { HandleBox(try checkOut(worktree: path, paths: second, disableFilters: disableFilters)) })
        }
        if started != 0 { _ = results.push(Result { HandleBox(try checkOut(worktree: path, paths: second, disableFilters: disableFilters)) }) }
        let firstOutcome = Result { try checkOut(worktree: path, paths: halves.0, disableFilters: disableFilters) }
        guard let secondOutcome = results.pop() else {
            throw GitError(.generic, "The checkout of \(path) lost its second half.", path: path)
        }
        let main = try firstOutcome.get()
        let other = try secondOutcome.get().repository
        let index = try GitHandle.make("git_repository_index", "open the index of \(path)", free: git_index_free) { git_repository_index(&$0, main.pointer) }
        let otherIndex = try GitHandle.make("git_repository_index", "open the index of \(path)", free: git_index_free) { git_repository_index(&$0, other.pointer) }
        for position in 0..<git_index_entrycount(otherIndex.pointer) {
            guard let entry = git_index_get_byindex(otherIndex.pointer, position) else { continue }
            try gitCall("git_index_add", "add an entry to the index of \(path)") { git_index_add(index.pointer, entry) }
        }
        try gitCall("git_index_write", "write the index of \(path)") { git_index_write(index.pointer) }
    }

    /// `git_checkout_head` of the files under `paths` (top-level names, matched exactly), into
    /// this handle's in-memory index; the index file is not written.
    private static func checkOut(worktree path: String, paths: [String], disableFilters: Bool) throws -> Repository {
        let repository = try Repository.open(path)
        var options = git_checkout_options()
        try gitCall("git_checkout_options_init") { git_checkout_options_init(&options, UInt32(GIT_CHECKOUT_OPTIONS_VERSION)) }
        options.checkout_strategy = GIT_CHECKOUT_SAFE.rawValue | GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH.rawValue | GIT_CHECKOUT_DONT_WRITE_INDEX.rawValue
        options.disable_filters = disableFilters ? 1 : 0
        let cPaths = paths.map { strdup($0) }
        defer { cPaths.forEach { free($0) } }
        var pointers = cPaths
        try pointers.withUnsafeMutableBufferPointer { buffer in
            options.paths = git_strarray(strings: buffer.baseAddress, count: buffer.count)
            try gitCall("git_checkout_head", "check out the worktree \(path)", path: path) { git_checkout_head(repository.pointer, &options) }
        }
        return repository
    }
}

/// A repository handle handed from the thread that finished with it to the one that reads it.
final class HandleBox: @unchecked Sendable {
    let repository: Repository
    init(_ repository: Repository) { self.repository = repository }
}
