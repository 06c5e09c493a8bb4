/// Glob matching: shell-style within a path component (`*`, `?`, `[abc]`, `[!a-z]`, `\x`), and
/// gitignore-style across components (`**` matches zero or more whole components).
public enum Glob {
    /// Whether `pattern` has an unescaped `*`, `?` or `[`.
    public static func hasWildcard(_ pattern: String) -> Bool {
        var escaped = false
        for c in pattern {
            if escaped {
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "*" || c == "?" || c == "[" {
                return true
            }
        }
        return false
    }

    /// `pattern` with its backslash escapes undone.
    public static func unescape(_ pattern: String) -> String {
        var out = ""
        var escaped = false
        for c in pattern {
            if !escaped, c == "\\" {
                escaped = true
                continue
            }
            escaped = false
            out.append(c)
        }
        return out
    }

    /// `c` escaped so that it matches only itself.
    public static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            if c == "*" || c == "?" || c == "[" || c == "\\" { out.append("\\") }
            out.append(c)
        }
        return out
    }

    /// One name against one component pattern (no `/` in either).
    public static func matchComponent(_ pattern: some StringProtocol, _ name: some StringProtocol) -> Bool {
        let p = Array(pattern), s = Array(name)
        // Iterative matching with one backtrack point for the last `*` (linear for these patterns).
        var pi = 0, si = 0
        var starP = -1, starS = 0
        while si < s.count {
            if pi < p.count {
                switch p[pi] {
                case "*":
                    starP = pi
                    starS = si
                    pi += 1
                    continue
                case "?":
                    pi += 1
                    si += 1
                    continue
                case "[":
                    if let (matched, next) = matchClass(p, pi, s[si]) {
                        if matched {
                            pi = next
                            si += 1
                            continue
                        }
                    } else if s[si] == "[" {
                        pi += 1
                        si += 1
                        continue
                    }
                case "\\" where pi + 1 < p.count:
                    if p[pi + 1] == s[si] {
                        pi += 2
                        si += 1
                        continue
                    }
                default:
                    if p[pi] == s[si] {
                        pi += 1
                        si += 1
                        continue
                    }
                }
            }
            guard starP >= 0 else { return false }
            pi = starP + 1
            starS += 1
            si = starS
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }

    /// `[…]` at `p[start]` against `c`: whether it matched and the index after `]`; nil when the
    /// bracket does not close (then `[` is literal).
    static func matchClass(_ p: [Character], _ start: Int, _ c: Character) -> (Bool, Int)? {
        var i = start + 1
        var negated = false
        if i < p.count, p[i] == "!" || p[i] == "^" {
            negated = true
            i += 1
        }
        var matched = false
        var first = true
        while i < p.count {
            if p[i] == "]", !first { return (matched != negated, i + 1) }
            first = false
            var low = p[i]
            if low == "\\", i + 1 < p.count {
                i += 1
                low = p[i]
            }
            if i + 2 < p.count, p[i + 1] == "-", p[i + 2] != "]" {
                if low <= c && c <= p[i + 2] { matched = true }
                i += 3
            } else {
                if low == c { matched = true }
                i += 1
            }
        }
        return nil
    }

    /// An absolute (or relative) path against a path pattern, component by component; a `**`
    /// component matches any number of components (including none).
    public static func matchPath(_ pattern: String, _ path: String) -> Bool {
        let p = pattern.split(separator: "/", omittingEmptySubsequences: true)
        let s = path.split(separator: "/", omittingEmptySubsequences: true)
        var memo = Set<Int>()
        return match(p, 0, s, 0, &memo)
    }

    private static func match(_ p: [Substring], _ i: Int, _ s: [Substring], _ j: Int, _ failed: inout Set<Int>) -> Bool {
        let key = i * (s.count + 1) + j
        if failed.contains(key) { return false }
        let result: Bool
        if i == p.count {
            result = j == s.count
        } else if p[i] == "**" {
            result = (j...s.count).contains { match(p, i + 1, s, $0, &failed) }
        } else {
            result = j < s.count && matchComponent(p[i], s[j]) && match(p, i + 1, s, j + 1, &failed)
        }
        if !result { failed.insert(key) }
        return result
    }
}
