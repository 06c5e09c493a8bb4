/// Did-you-mean: the word a mistyped one most likely meant.
public enum Spelling {
    /// The candidate closest to `word` by edit distance when it is near (at most a third of the
    /// word's length, and at least 2), else the one `word` begins; nil when none is.
    public static func nearest(_ word: String, among candidates: some Sequence<String>) -> String? {
        let candidates = Array(candidates)
        let scored = candidates.map { ($0, editDistance($0, word)) }.sorted { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }
        if let best = scored.first, best.1 <= max(2, word.count / 3) { return best.0 }
        return candidates.sorted().first { word.count >= 3 && $0.hasPrefix(word) }
    }

    /// Levenshtein distance over characters.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
