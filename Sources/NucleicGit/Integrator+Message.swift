/// Commit messages the integrator writes, with the `Nucleic-Session` trailer.
enum IntegrationMessage {
    static let trailerKey = "Nucleic-Session"

    /// The snapshot commit of a session worktree's uncommitted work.
    static func snapshot(sessionID: String) -> String {
        withSessionTrailer("""
            Snapshot of session \(sessionID)

            Work left uncommitted in the session's worktree, committed by Nucleic before \
            integrating it.
            """, sessionID: sessionID)
    }

    /// The merge commit of a session branch into its base.
    static func merge(branch: String, base: String, sessionID: String) -> String {
        withSessionTrailer("Merge branch '\(branch)' into \(base)", sessionID: sessionID)
    }

    /// The caller's squash message (or a plain title when it is blank) with the trailer.
    static func squash(_ message: String, sessionID: String) -> String {
        let text = message.trimmingWhitespace.isEmpty ? "Integrate session \(sessionID)" : message
        return withSessionTrailer(text, sessionID: sessionID)
    }

    /// `message` with `Nucleic-Session: <id>` as a trailer, ending in one newline, as
    /// `git interpret-trailers` would place it: appended to a final paragraph that is already
    /// trailers (`Co-authored-by: …`), else in a paragraph of its own. Kept as is when the
    /// message already carries exactly that trailer.
    static func withSessionTrailer(_ message: String, sessionID: String) -> String {
        let trailer = "\(trailerKey): \(sessionID)"
        var lines = message.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.trimmingTrailingWhitespace) }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        if lines.contains(trailer) { return lines.joined(separator: "\n") + "\n" }
        let lastParagraphStart = (lines.lastIndex(of: "") ?? -1) + 1
        let lastParagraph = lines[lastParagraphStart...]
        // A final paragraph of trailers, not the title itself.
        let endsInTrailers = lastParagraphStart > 0 && !lastParagraph.isEmpty && lastParagraph.allSatisfy(isTrailerLine)
        if lines.isEmpty {
            lines = [trailer]
        } else if endsInTrailers {
            lines.append(trailer)
        } else {
            lines += ["", trailer]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `Token: value`, where the token is letters, digits and `-` (git's trailer syntax).
    private static func isTrailerLine(_ line: String) -> Bool {
        guard let colon = line.firstIndex(of: ":"), colon != line.startIndex else { return false }
        let token = line[..<colon]
        return token.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" } && line[line.index(after: colon)...].hasPrefix(" ")
    }
}

extension StringProtocol {
    var trimmingWhitespace: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        return String(text.trimmingTrailingWhitespace)
    }

    var trimmingTrailingWhitespace: Substring {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text
    }
}
