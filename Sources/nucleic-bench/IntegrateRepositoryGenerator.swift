/// The repository `nucleic-bench integrate` works on, generated from a seed as a
/// `git fast-import` stream: the same seed gives the same commits (ids included) on every machine.
///
/// History (fixed dates, one author):
/// - `main`: three commits, the first with every file, the next two changing 100 files each
///   (a twentieth of the files in a smaller repository), plus an add and a delete. Its tip is
///   tagged `bench/base`: where a session branched.
/// - `session` (also tagged `bench/session`): three commits on `bench/base` that change
///   `changed` files in all: edits, renames (one with an edit), deletions, new files (one in a
///   new folder), a rewritten binary file, a file made executable, and a few files that main
///   also edits elsewhere in the file (so a merge of those is a clean three-way merge).
/// - `bench/moved`: two commits on `bench/base` in which main moves on: other files edited, two
///   added, one deleted, and the far end of the files both sides edit.
///
/// Files: text that looks like source (5–120 lines), 2% binary files (random bytes, NULs
/// included), 1% shell scripts with the executable bit; 1 to 4 folders deep.
struct IntegrateRepositoryGenerator {
    /// What the generated repository holds, for the report.
    struct Facts {
        var files = 0
        var folders = 0
        var bytes = 0
        var binaryFiles = 0
        var executables = 0
        var historyCommits = 3
        var sessionCommits = 3
        var movedCommits = 2
        /// The session's change, by kind.
        var modified = 0, renamed = 0, deleted = 0, added = 0, binary = 0, modeChanged = 0, bothSides = 0
        /// Files the base's two commits change.
        var movedFiles = 0

        var sessionFiles: Int { modified + renamed + deleted + added + binary + modeChanged + bothSides }
    }

    private struct File {
        var mode: String  // "100644" or "100755"
        var content: [UInt8]
        var isBinary: Bool
        var lines: Int
    }

    private var rng: SplitMix64
    private var files: [String: File] = [:]
    private var order: [String] = []  // paths in creation order (deterministic choices)
    private(set) var stream: [UInt8] = []
    private(set) var facts = Facts()
    private var mark = 0
    private var time: Int64 = 1_767_225_600  // 2026-01-01, a fixed clock: the same ids every run

    static let author = "Nucleic Bench <bench@nucleic.invalid>"

    /// The fast-import stream for `fileCount` files and a session that changes `changed` files.
    static func generate(fileCount: Int, changed: Int, seed: UInt64) -> (stream: [UInt8], facts: Facts) {
        var generator = IntegrateRepositoryGenerator(rng: SplitMix64(seed: seed))
        generator.build(fileCount: fileCount, changed: changed)
        return (generator.stream, generator.facts)
    }

    private init(rng: SplitMix64) { self.rng = rng }

    private mutating func build(fileCount: Int, changed: Int) {
        // 1. The initial tree.
        var folders = Set<String>()
        for index in 0..<fileCount {
            let path = newPath(index: index)
            var folder = Substring(path)
            while let slash = folder.lastIndex(of: "/") {
                folder = folder[..<slash]
                folders.insert(String(folder))
            }
            files[path] = makeFile(path)
            order.append(path)
        }
        facts.files = fileCount
        facts.folders = folders.count
        facts.bytes = files.values.reduce(0) { $0 + $1.content.count }
        facts.binaryFiles = files.values.filter(\.isBinary).count
        facts.executables = files.values.filter { $0.mode == "100755" }.count
        var tip = commit("refs/heads/main", parent: nil, message: "Initial import", changes: order.map { .write($0) })

        // 2. Two more commits of history on main.
        var untouched = order  // files no later change has chosen yet
        for round in 1...2 {
            var changes: [Change] = []
            for path in take(min(100, fileCount / 20), from: &untouched, where: { !$0.isBinary }) {
                edit(path, at: .middle)
                changes.append(.write(path))
            }
            let added = "history/round\(round)/notes\(round).md"
            files[added] = makeFile(added)
            changes.append(.write(added))
            for removed in take(1, from: &untouched, where: { !$0.isBinary }) {
                files[removed] = nil
                changes.append(.delete(removed))
            }
            tip = commit("refs/heads/main", parent: tip, message: "History \(round): edits across the tree", changes: changes)
        }
        let base = tip
        let baseFiles = files
        emit("reset refs/tags/bench/base\nfrom :\(base)\n\n")

        // 3. The session: `changed` files over three commits.
        let renamed = max(1, changed / 10), deleted = max(1, changed / 12), added = max(1, changed / 16)
        let bothSides = max(1, changed / 16)
        let modified = max(0, changed - renamed - deleted - added - bothSides - 2)
        let bothSidesPaths = take(bothSides, from: &untouched, where: { !$0.isBinary && $0.lines >= 40 })
        var session: [[Change]] = [[], [], []]
        for path in take(modified, from: &untouched, where: { !$0.isBinary && $0.mode == "100644" }) {
            edit(path, at: .middle)
            session[facts.modified % 2 == 0 ? 0 : 2].append(.write(path))
            facts.modified += 1
        }
        for (index, path) in take(renamed, from: &untouched, where: { !$0.isBinary }).enumerated() {
            var file = files[path]!
            files[path] = nil
            let folder = index == 0 ? "moved/here" : String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
            let name = "renamed\(index)-" + String(path[path.index(after: path.lastIndex(of: "/") ?? path.startIndex)...])
            let target = folder.isEmpty ? name : folder + "/" + name
            if index == renamed - 1 { file.content = edited(file.content, at: .start) }  // a rename with an edit
            files[target] = file
            session[1] += [.delete(path), .write(target)]
            facts.renamed += 1
        }
        for path in take(deleted, from: &untouched, where: { _ in true }) {
            files[path] = nil
            session[1].append(.delete(path))
            facts.deleted += 1
        }
        for index in 0..<added {
            let path = index == 0 ? "features/session/new\(index).swift" : order[index * 97 % order.count].prefix { $0 != "/" } + "/added\(index).swift"
            files[path] = makeFile(path, kind: .text)
            session[1].append(.write(path))
            facts.added += 1
        }
        // (A repository too small to have a binary file gets a new one.)
        let binary = take(1, from: &untouched, where: \.isBinary).first ?? "assets/generated.bin"
        files[binary] = File(mode: "100644", content: randomBytes(count: (files[binary]?.content.count ?? 4096) + 512), isBinary: true, lines: 0)
        session[2].append(.write(binary))
        facts.binary = 1
        for script in take(1, from: &untouched, where: { !$0.isBinary && $0.mode == "100644" }) {
            files[script]!.mode = "100755"
            session[2].append(.write(script))
            facts.modeChanged = 1
        }
        for path in bothSidesPaths {
            edit(path, at: .start)
            session[2].append(.write(path))
            facts.bothSides += 1
        }
        var sessionTip = base
        for (index, changes) in session.enumerated() {
            let title = ["Session: edit half of the files", "Session: rename, delete and add files", "Session: the rest, a binary file, an executable"][index]
            sessionTip = commit("refs/heads/session", parent: sessionTip, message: title, changes: changes)
        }
        emit("reset refs/tags/bench/session\nfrom :\(sessionTip)\n\n")

        // 4. Main moves on, elsewhere (and at the far end of the files both sides edit).
        files = baseFiles
        var moved: [[Change]] = [[], []]
        for (index, path) in take(max(1, changed / 2), from: &untouched, where: { !$0.isBinary }).enumerated() {
            edit(path, at: .middle)
            moved[index % 2].append(.write(path))
        }
        for index in 0..<2 {
            let path = "base/moved/file\(index).swift"
            files[path] = makeFile(path, kind: .text)
            moved[1].append(.write(path))
        }
        for removed in take(1, from: &untouched, where: { _ in true }) {
            files[removed] = nil
            moved[1].append(.delete(removed))
        }
        for path in bothSidesPaths {
            edit(path, at: .end)
            moved[0].append(.write(path))
        }
        facts.movedFiles = moved.reduce(0) { $0 + $1.count }
        var movedTip = base
        for (index, changes) in moved.enumerated() {
            movedTip = commit("refs/tags/bench/moved", parent: movedTip, message: "Main moves on (\(index + 1) of 2)", changes: changes)
        }
    }

    // MARK: Paths and contents

    private static let top = ["app", "core", "net", "store", "ui", "tools", "tests", "vendor"]
    private static let middle = ["model", "view", "io", "auth", "sync", "parser", "cache", "util"]
    private static let leaf = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"]
    private static let words = ["value", "index", "buffer", "state", "token", "result", "session", "worktree", "branch",
                                "commit", "reader", "writer", "count", "offset", "limit", "name", "path", "entry"]

    /// 1–4 folders (mostly 2–3; about 1,200 folders for 10,000 files, 8 files a folder), then a
    /// unique file name.
    private mutating func newPath(index: Int) -> String {
        let depth = [1, 2, 2, 2, 3, 3, 3, 3, 4, 4][Int(rng.next() % 10)]
        var parts = [Self.top[Int(rng.next() % UInt64(Self.top.count))]]
        if depth >= 2 { parts.append(Self.middle[Int(rng.next() % UInt64(Self.middle.count))]) }
        if depth >= 3 { parts.append(Self.leaf[Int(rng.next() % UInt64(Self.leaf.count))]) }
        if depth >= 4 { parts.append("part\(rng.next() % 2)") }
        let roll = rng.next() % 100
        let ext = roll < 2 ? "bin" : roll < 3 ? "sh" : ["swift", "swift", "swift", "md", "json", "txt", "c", "h"][Int(rng.next() % 8)]
        parts.append(Self.words[Int(rng.next() % UInt64(Self.words.count))] + String(index) + "." + ext)
        return parts.joined(separator: "/")
    }

    private enum Kind { case text, binary, script }

    private mutating func makeFile(_ path: String, kind: Kind? = nil) -> File {
        let kind = kind ?? (path.hasSuffix(".bin") ? .binary : path.hasSuffix(".sh") ? .script : .text)
        switch kind {
        case .binary:
            return File(mode: "100644", content: randomBytes(count: 1024 + Int(rng.next() % 15_360)), isBinary: true, lines: 0)
        case .script, .text:
            let count = 5 + Int(rng.next() % 116)
            var content = Array((kind == .script ? "#!/bin/sh\n" : "// \(path)\n").utf8)
            for _ in 1..<count { content += line() }
            return File(mode: kind == .script ? "100755" : "100644", content: content, isBinary: false, lines: count)
        }
    }

    private mutating func line() -> [UInt8] {
        let indent = String(repeating: "    ", count: Int(rng.next() % 3))
        let a = Self.words[Int(rng.next() % UInt64(Self.words.count))]
        let b = Self.words[Int(rng.next() % UInt64(Self.words.count))]
        let n = rng.next() % 1000
        let text = switch rng.next() % 4 {
        case 0: "\(indent)let \(a)\(n) = \(b).next(\(n))\n"
        case 1: "\(indent)if \(a) > \(n) { return \(b) }\n"
        case 2: "\(indent)// \(a) \(b): keep \(n) of them\n"
        default: "\(indent)\(a).append(\(b), limit: \(n))\n"
        }
        return Array(text.utf8)
    }

    private mutating func randomBytes(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 8)
        while bytes.count < count {
            let word = rng.next()
            // Every eighth byte zero: binary to git (a NUL in the first 8000 bytes).
            for shift in stride(from: 0, to: 56, by: 8) { bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift))) }
            bytes.append(0)
        }
        return Array(bytes.prefix(count))
    }

    private enum Region { case start, middle, end }

    private mutating func edit(_ path: String, at region: Region) {
        files[path]!.content = edited(files[path]!.content, at: region)
    }

    /// Three lines replaced: near the start (lines 2–4), in the middle, or near the end (the
    /// last three but two). Start and end edits of a 40-line file are far apart: both merge.
    private mutating func edited(_ content: [UInt8], at region: Region) -> [UInt8] {
        var lines = content.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        if lines.last == [] { lines.removeLast() }
        let first = switch region {
        case .start: min(1, lines.count)
        case .middle: lines.count / 2
        case .end: max(0, lines.count - 5)
        }
        for index in first..<min(first + 3, lines.count) { lines[index] = Array(line().dropLast()) }
        if lines.count < 3 { lines.append(Array(line().dropLast())) }
        return Array(lines.joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")]
    }

    /// Up to `count` paths from `pool`, chosen at random, that satisfy `predicate`; each is
    /// removed from the pool so no two changes pick the same file.
    private mutating func take(_ count: Int, from pool: inout [String], where predicate: (File) -> Bool) -> [String] {
        var chosen: [String] = []
        var attempts = 0
        while chosen.count < count, !pool.isEmpty, attempts < 100 * (count + 10) {
            attempts += 1
            let index = Int(rng.next() % UInt64(pool.count))
            guard let file = files[pool[index]], predicate(file) else { continue }
            chosen.append(pool.remove(at: index))
        }
        return chosen
    }

    // MARK: fast-import

    private enum Change {
        case write(String)
        case delete(String)
    }

    /// Emits a commit on `ref` and returns its mark.
    private mutating func commit(_ ref: String, parent: Int?, message: String, changes: [Change]) -> Int {
        mark += 1
        time += 3600
        let signature = "\(Self.author) \(time) +0000"
        emit("commit \(ref)\nmark :\(mark)\nauthor \(signature)\ncommitter \(signature)\n")
        emitData(Array(message.utf8) + [UInt8(ascii: "\n")])
        if let parent { emit("from :\(parent)\n") }
        for change in changes {
            switch change {
            case .delete(let path): emit("D \(path)\n")
            case .write(let path):
                let file = files[path]!
                emit("M \(file.mode) inline \(path)\n")
                emitData(file.content)
            }
        }
        emit("\n")
        return mark
    }

    private mutating func emit(_ text: String) { stream += Array(text.utf8) }

    private mutating func emitData(_ bytes: [UInt8]) {
        emit("data \(bytes.count)\n")
        stream += bytes
        emit("\n")
    }
}
