/// Line diffs as `diff -u` prints them, for showing what a file edit will do before it is made.
///
/// Pure and small: a longest-common-subsequence table over the lines that differ once the common
/// head and tail are set aside, which is quadratic only in the changed middle (edits an agent
/// asks to make are short). Past ``maximumCells`` the middle is shown as all removed then all
/// added, which is still a correct diff.
public enum UnifiedDiff {
    /// The largest LCS table worked out (lines removed × lines added in the changed middle).
    public static let maximumCells = 1_000_000

    /// One line of a diff.
    public enum Line: Sendable, Hashable {
        case context(String), removed(String), added(String)

        public var text: String {
            switch self {
            case .context(let s): " " + s
            case .removed(let s): "-" + s
            case .added(let s): "+" + s
            }
        }
    }

    /// The hunks (`@@ -a,b +c,d @@` then their lines) turning `old` into `new`, with `context`
    /// unchanged lines around each change. Line numbers count from `firstLine` on both sides.
    /// Empty when the texts are equal.
    public static func hunks(old: String, new: String, context: Int = 3, firstLine: Int = 1) -> [String] {
        let a = lines(old), b = lines(new)
        let script = edits(a, b)
        guard script.contains(where: { if case .context = $0 { false } else { true } }) else { return [] }
        var positions: [(old: Int, new: Int)] = []
        var oldLine = firstLine, newLine = firstLine
        for line in script {
            positions.append((oldLine, newLine))
            switch line {
            case .context: oldLine += 1; newLine += 1
            case .removed: oldLine += 1
            case .added: newLine += 1
            }
        }
        // Changes at most 2×context unchanged lines apart share a hunk, as in `diff -u`.
        var groups: [(first: Int, last: Int)] = []
        for index in script.indices {
            if case .context = script[index] { continue }
            if let last = groups.last, index - last.last - 1 <= 2 * context {
                groups[groups.count - 1].last = index
            } else {
                groups.append((index, index))
            }
        }
        var out: [String] = []
        for group in groups {
            let start = max(0, group.first - context), stop = min(script.count, group.last + context + 1)
            let body = script[start..<stop]
            let oldCount = body.filter { if case .added = $0 { false } else { true } }.count
            let newCount = body.filter { if case .removed = $0 { false } else { true } }.count
            // An empty side is numbered by the line before it, as diff does (`-0,0`).
            let oldStart = oldCount == 0 ? positions[start].old - 1 : positions[start].old
            let newStart = newCount == 0 ? positions[start].new - 1 : positions[start].new
            out.append("@@ -\(range(oldStart, oldCount)) +\(range(newStart, newCount)) @@")
            out += body.map(\.text)
        }
        return out
    }

    /// A whole file's diff: `--- a/old` / `+++ b/new` headers (`/dev/null` for a side that does
    /// not exist) and the hunks. Empty when nothing changes.
    public static func file(path: String, old: String?, new: String?, context: Int = 3) -> [String] {
        let hunks = hunks(old: old ?? "", new: new ?? "", context: context)
        guard !hunks.isEmpty else { return [] }
        // An absolute path (outside the worktree) is shown as it is, without a/ and b/.
        let shown = { (side: String) in path.hasPrefix("/") ? path : side + "/" + path }
        return [old == nil ? "--- /dev/null" : "--- " + shown("a"), new == nil ? "+++ /dev/null" : "+++ " + shown("b")] + hunks
    }

    /// The edit script from `a` to `b`: every line of both, in order.
    public static func edits(_ a: [String], _ b: [String]) -> [Line] {
        var head = 0
        while head < a.count, head < b.count, a[head] == b[head] { head += 1 }
        var tail = 0
        while tail < a.count - head, tail < b.count - head, a[a.count - 1 - tail] == b[b.count - 1 - tail] { tail += 1 }
        let x = Array(a[head..<(a.count - tail)]), y = Array(b[head..<(b.count - tail)])
        var middle: [Line] = []
        if x.count * y.count > maximumCells || x.isEmpty || y.isEmpty {
            middle = x.map(Line.removed) + y.map(Line.added)
        } else {
            // lengths[i][j]: the LCS of x[i...] and y[j...].
            var lengths = [[Int32]](repeating: [Int32](repeating: 0, count: y.count + 1), count: x.count + 1)
            for i in stride(from: x.count - 1, through: 0, by: -1) {
                for j in stride(from: y.count - 1, through: 0, by: -1) {
                    lengths[i][j] = x[i] == y[j] ? lengths[i + 1][j + 1] + 1 : max(lengths[i + 1][j], lengths[i][j + 1])
                }
            }
            var i = 0, j = 0
            while i < x.count || j < y.count {
                if i < x.count, j < y.count, x[i] == y[j] {
                    middle.append(.context(x[i])); i += 1; j += 1
                } else if j == y.count || (i < x.count && lengths[i + 1][j] >= lengths[i][j + 1]) {
                    middle.append(.removed(x[i])); i += 1  // removals first, as diff prints them
                } else {
                    middle.append(.added(y[j])); j += 1
                }
            }
        }
        return a[..<head].map(Line.context) + middle + a[(a.count - tail)...].map(Line.context)
    }

    /// The lines of `text`; a final newline ends the last line rather than starting an empty one.
    public static func lines(_ text: String) -> [String] {
        guard !text.isEmpty else { return [] }
        var parts = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if text.hasSuffix("\n") { parts.removeLast() }
        return parts
    }

    private static func range(_ start: Int, _ count: Int) -> String {
        count == 1 ? "\(start)" : "\(start),\(count)"
    }
}
