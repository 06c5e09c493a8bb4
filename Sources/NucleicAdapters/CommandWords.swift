/// A command line cut into words as a POSIX shell cuts a simple command, without running one:
/// blanks separate words, `'…'` keeps everything literal, `"…"` keeps everything but `\"`, `\\`,
/// `\$` and `` \` ``, and a backslash outside quotes escapes the next character. Nothing is
/// expanded: a `$`, `*`, `|` or `;` is a literal character of its word.
public enum CommandWords {
    public struct SplitError: Error, Sendable, Hashable {
        public let message: String
    }

    public static func split(_ line: String) throws(SplitError) -> [String] {
        var words: [String] = []
        var word = ""
        var inWord = false
        var iterator = Array(line).makeIterator()
        while let c = iterator.next() {
            switch c {
            case " ", "\t", "\n":
                if inWord { words.append(word) }
                word = ""
                inWord = false
            case "'":
                inWord = true
                var closed = false
                while let d = iterator.next() {
                    if d == "'" { closed = true; break }
                    word.append(d)
                }
                if !closed { throw SplitError(message: "a single quote is not closed") }
            case "\"":
                inWord = true
                var closed = false
                while let d = iterator.next() {
                    if d == "\"" { closed = true; break }
                    if d == "\\" {
                        guard let e = iterator.next() else { break }
                        if !"\"\\$`".contains(e) { word.append("\\") }
                        word.append(e)
                    } else {
                        word.append(d)
                    }
                }
                if !closed { throw SplitError(message: "a double quote is not closed") }
            case "\\":
                inWord = true
                guard let d = iterator.next() else { throw SplitError(message: "it ends with a lone backslash") }
                if d != "\n" { word.append(d) }
            default:
                inWord = true
                word.append(c)
            }
        }
        if inWord { words.append(word) }
        return words
    }

    /// One word as `split` reads it back: bare when it holds only safe characters, else in
    /// single quotes.
    public static func quote(_ word: String) -> String {
        let safe = !word.isEmpty && word.allSatisfy { $0.isLetter || $0.isNumber || "-_./=:,+@%".contains($0) }
        if safe { return word }
        var quoted = "'"
        for c in word { if c == "'" { quoted += "'\\''" } else { quoted.append(c) } }
        return quoted + "'"
    }
}
