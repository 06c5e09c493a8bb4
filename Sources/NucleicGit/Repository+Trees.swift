import CGit2
import Glibc

/// Tree comparisons for the integrator that read only the folders that differ.
///
/// libgit2's general tools read every tree of both sides: `git_diff_tree_to_tree` walks all of
/// them even where a subtree's id is the same on both sides, and `git_index_write_tree_to` on a
/// merge index (which has no tree cache) rebuilds every folder and reads the header of every
/// file's object to validate it (libgit2's strict object creation: for packed, deltified objects,
/// an inflate each). On a 10,000-file repository that was most of an integration's time
/// (docs/BENCHMARKS.md, `integrate`). Paths are compared as bytes, never as `String`s (which
/// compare by canonical equivalence and repair invalid UTF-8).
extension Repository {
    /// One entry of a tree: its name's bytes, object id and mode as stored.
    struct TreeEntry {
        let name: [UInt8]
        let id: OID
        let mode: UInt32

        var isTree: Bool { mode == GIT_FILEMODE_TREE.rawValue }
    }

    /// Every path that differs between two trees (both sides of a rename, no rename
    /// detection), sorted: exactly the files a checkout from one tree to the other writes or
    /// deletes. Subtrees with the same id on both sides are skipped unread.
    func changedPaths(from old: OID, to new: OID) throws -> [String] {
        if old == new { return [] }
        var paths: [[UInt8]] = []
        try collectChangedPaths(old: old, new: new, prefix: [], into: &paths)
        return paths.map { String(decoding: $0, as: UTF8.self) }.sorted()
    }

    /// The tree of `index` (a clean in-memory merge index), written to the object database.
    ///
    /// Built as `base` (the tree the merge was made onto) with only the entries that differ
    /// from it replaced (`git_tree_create_updated`), so only the folders that change are
    /// written and only the objects that are new there are validated. The result is the tree
    /// `git_index_write_tree_to` writes, which is still used when the change cannot be made as
    /// updates (a file replaced by a folder or the reverse).
    func writeTree(of index: OpaquePointer, basedOn base: OID) throws -> OID {
        if let tree = try updatedTree(base, toMatch: index) { return tree }
        var tree = git_oid()
        try gitCall("git_index_write_tree_to", "write the merged tree") { git_index_write_tree_to(&tree, index, pointer) }
        return OID(tree)
    }

    // MARK: Helpers

    /// The entries of tree `tree`, in the tree's order.
    func treeEntries(_ tree: OID) throws -> [TreeEntry] {
        var raw = tree.raw
        let handle = try GitHandle.make("git_tree_lookup", "read tree \(tree.abbreviated())", free: git_tree_free) {
            git_tree_lookup(&$0, pointer, &raw)
        }
        let count = git_tree_entrycount(handle.pointer)
        var entries: [TreeEntry] = []
        entries.reserveCapacity(count)
        for index in 0..<count {
            guard let entry = git_tree_entry_byindex(handle.pointer, index), let name = git_tree_entry_name(entry) else { continue }
            let bytes = UnsafeRawBufferPointer(start: name, count: strlen(name))
            entries.append(TreeEntry(name: Array(bytes), id: OID(git_tree_entry_id(entry).pointee), mode: git_tree_entry_filemode_raw(entry).rawValue))
        }
        return entries
    }

    /// Walks the trees `old` and `new` (nil: absent) side by side below `prefix`.
    private func collectChangedPaths(old: OID?, new: OID?, prefix: [UInt8], into paths: inout [[UInt8]]) throws {
        let oldEntries = try old.map(treeEntries) ?? []
        let newEntries = try new.map(treeEntries) ?? []
        // (Names are unique in a valid tree; a broken one must not crash the walk.)
        var unmatched = Dictionary(newEntries.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for entry in oldEntries {
            try compare(entry, unmatched.removeValue(forKey: entry.name), prefix: prefix, into: &paths)
        }
        for entry in newEntries where unmatched.removeValue(forKey: entry.name) != nil {
            try compare(nil, entry, prefix: prefix, into: &paths)
        }
    }

    /// One name on both sides: the file paths that differ there.
    private func compare(_ old: TreeEntry?, _ new: TreeEntry?, prefix: [UInt8], into paths: inout [[UInt8]]) throws {
        if let old, let new, old.id == new.id, old.mode == new.mode { return }
        let path = prefix + (old ?? new)!.name
        let oldTree = old.flatMap { $0.isTree ? $0.id : nil }
        let newTree = new.flatMap { $0.isTree ? $0.id : nil }
        if oldTree != nil || newTree != nil {
            try collectChangedPaths(old: oldTree, new: newTree, prefix: path + [UInt8(ascii: "/")], into: &paths)
        }
        if old.map({ !$0.isTree }) == true || new.map({ !$0.isTree }) == true { paths.append(path) }
    }

    /// `base` with the entries that differ from `index` replaced or removed, or nil when that
    /// cannot be done as updates of `base` (git_tree_create_updated refuses a file that becomes
    /// a folder or the reverse) or the two are not in the order the comparison needs: the
    /// caller writes the whole index then.
    func updatedTree(_ base: OID, toMatch index: OpaquePointer) throws -> OID? {
        // A case-insensitive index is sorted differently from trees.
        guard git_index_caps(index) & Int32(GIT_INDEX_CAPABILITY_IGNORE_CASE.rawValue) == 0 else { return nil }
        var join = TreeIndexJoin(index: index)
        guard try join.walk(base, in: self), join.finish() else { return nil }
        return try updatedTree(base, upserts: join.upserts, removals: join.removals)
    }

    /// `base` with the files at `upserts` set and those at `removals` removed
    /// (`git_tree_create_updated`: only the folders on their paths are read and written), or nil
    /// when libgit2 refuses (a file that becomes a folder or the reverse).
    func updatedTree(_ base: OID, upserts: [(path: [UInt8], id: OID, mode: UInt32)], removals: [[UInt8]]) throws -> OID? {
        if upserts.isEmpty && removals.isEmpty { return base }
        var baseID = base.raw
        let baseTree = try GitHandle.make("git_tree_lookup", "read tree \(base.abbreviated())", free: git_tree_free) {
            git_tree_lookup(&$0, pointer, &baseID)
        }
        let paths = upserts.map(\.path) + removals
        let cPaths: [UnsafeMutablePointer<CChar>] = paths.map { path in
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: path.count + 1)
            for (offset, byte) in path.enumerated() { copy[offset] = CChar(bitPattern: byte) }
            copy[path.count] = 0
            return copy
        }
        defer { cPaths.forEach { $0.deallocate() } }
        var updates: [git_tree_update] = []
        updates.reserveCapacity(paths.count)
        for (position, upsert) in upserts.enumerated() {
            updates.append(git_tree_update(action: GIT_TREE_UPDATE_UPSERT, id: upsert.id.raw, filemode: git_filemode_t(rawValue: upsert.mode), path: UnsafePointer(cPaths[position])))
        }
        for position in upserts.count..<paths.count {
            updates.append(git_tree_update(action: GIT_TREE_UPDATE_REMOVE, id: git_oid(), filemode: GIT_FILEMODE_UNREADABLE, path: UnsafePointer(cPaths[position])))
        }
        var out = git_oid()
        git_error_clear()
        let rc = updates.withUnsafeBufferPointer { git_tree_create_updated(&out, pointer, baseTree.pointer, $0.count, $0.baseAddress) }
        if rc < 0 {
            git_error_clear()
            return nil
        }
        return OID(out)
    }
}

/// Compares a tree with an index in one ordered pass, as a merge of two sorted lists.
///
/// A tree walked depth-first in its own entry order (git sorts a folder's name as if it ended
/// in `/`) lists its files in the order of their full paths compared byte by byte, which is the
/// order of a case-sensitive index. Each file of the tree is matched with the index entry at the
/// same path; what differs becomes an upsert, what only the tree has a removal. Both orders are
/// checked as the walk goes: a tree or index out of order stops it (`ordered` false).
private struct TreeIndexJoin {
    let index: OpaquePointer
    let count: Int
    var position = 0
    var upserts: [(path: [UInt8], id: OID, mode: UInt32)] = []
    var removals: [[UInt8]] = []
    private(set) var ordered = true
    /// The path of the tree entry being looked at (reused, not reallocated per file).
    private var path: [UInt8] = []

    init(index: OpaquePointer) {
        self.index = index
        count = git_index_entrycount(index)
        path.reserveCapacity(4096)
    }

    /// Walks tree `tree` (whose path is `path`); false when it stopped on something out of order.
    mutating func walk(_ tree: OID, in repository: Repository) throws -> Bool {
        var raw = tree.raw
        let handle = try GitHandle.make("git_tree_lookup", "read tree \(tree.abbreviated())", free: git_tree_free) {
            git_tree_lookup(&$0, repository.pointer, &raw)
        }
        // An empty folder (git never writes one, other tools may) has no index entry to keep
        // it: the written tree would drop it, an update of `base` would not.
        let entries = git_tree_entrycount(handle.pointer)
        if entries == 0 { return stop() }
        var previous: (name: UnsafePointer<CChar>, length: Int, isTree: Bool)?
        for position in 0..<entries {
            guard let entry = git_tree_entry_byindex(handle.pointer, position), let name = git_tree_entry_name(entry) else { return stop() }
            let length = strlen(name)
            let mode = git_tree_entry_filemode_raw(entry).rawValue
            let isTree = mode == GIT_FILEMODE_TREE.rawValue
            if let previous, Self.treeOrder(previous, (name, length, isTree)) >= 0 { return stop() }
            previous = (name, length, isTree)
            let mark = path.count
            path.append(contentsOf: UnsafeRawBufferPointer(start: name, count: length))
            if isTree {
                path.append(UInt8(ascii: "/"))
                guard try walk(OID(git_tree_entry_id(entry).pointee), in: repository) else { return false }
            } else {
                guard match(id: OID(git_tree_entry_id(entry).pointee), mode: mode) else { return false }
            }
            path.removeSubrange(mark...)
        }
        return true
    }

    /// The index entries after the tree's last file are new.
    mutating func finish() -> Bool {
        while position < count {
            guard upsertCurrent() else { return false }
        }
        return ordered
    }

    /// The tree's file at `path` against the index.
    private mutating func match(id: OID, mode: UInt32) -> Bool {
        while position < count {
            guard let entry = git_index_get_byindex(index, position) else { return stop() }
            let order = Self.compare(entry.pointee.path, path)
            if order < 0 {  // only in the index
                guard upsertCurrent() else { return false }
                continue
            }
            if order == 0 {
                if OID(entry.pointee.id) != id || entry.pointee.mode != mode {
                    upserts.append((path, OID(entry.pointee.id), entry.pointee.mode))
                }
                return advance()
            }
            break
        }
        removals.append(path)  // only in the tree
        return true
    }

    private mutating func upsertCurrent() -> Bool {
        guard let entry = git_index_get_byindex(index, position), let cPath = entry.pointee.path else { return stop() }
        upserts.append((Array(UnsafeRawBufferPointer(start: cPath, count: strlen(cPath))), OID(entry.pointee.id), entry.pointee.mode))
        return advance()
    }

    /// Moves to the next index entry, which must be a stage-0 entry at a later path.
    private mutating func advance() -> Bool {
        guard let current = git_index_get_byindex(index, position), git_index_entry_stage(current) == 0 else { return stop() }
        position += 1
        if position < count {
            guard let next = git_index_get_byindex(index, position), strcmp(current.pointee.path, next.pointee.path) < 0 else { return stop() }
        }
        return true
    }

    private mutating func stop() -> Bool {
        ordered = false
        return false
    }

    /// `strcmp` of a C string with bytes.
    private static func compare(_ cString: UnsafePointer<CChar>, _ bytes: [UInt8]) -> Int32 {
        let length = strlen(cString)
        let order = bytes.withUnsafeBytes { raw in raw.baseAddress.map { memcmp(cString, $0, min(length, bytes.count)) } ?? 0 }
        if order != 0 { return order }
        return length < bytes.count ? -1 : length > bytes.count ? 1 : 0
    }

    /// git's tree order: names compared as bytes, a folder's as if it ended in `/`.
    private static func treeOrder(_ a: (name: UnsafePointer<CChar>, length: Int, isTree: Bool), _ b: (name: UnsafePointer<CChar>, length: Int, isTree: Bool)) -> Int32 {
        let common = min(a.length, b.length)
        let order = memcmp(a.name, b.name, common)
        if order != 0 { return order }
        let nextA: Int32 = a.length > common ? Int32(UInt8(bitPattern: a.name[common])) : a.isTree ? Int32(UInt8(ascii: "/")) : 0
        let nextB: Int32 = b.length > common ? Int32(UInt8(bitPattern: b.name[common])) : b.isTree ? Int32(UInt8(ascii: "/")) : 0
        return nextA - nextB
    }
}
