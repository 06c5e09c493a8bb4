/// Why a snapshot commit is made, which its message says: before an integration, or before a
/// discarded session's worktree is removed.
public enum SnapshotPurpose: Sendable, Hashable { case integration, discard }

/// Commit messages the integrator writes: the session's subject, `Co-authored-by:` trailers for
/// its agent and the `Nucleic-Session` trailer.
enum IntegrationMessage {
    static let trailerKey = "Nucleic-Session"

    /// The snapshot commit of a session worktree's uncommitted work.
    static func snapshot(sessionID: String, attribution: SessionAttribution, purpose: SnapshotPurpose = .integration) -> String {
        let why = purpose == .integration ? "before integrating it" : "before removing the worktree (the session was discarded)"
        return withTrailers("""
            \(subject(attribution))

            Work left uncommitted in the session's worktree, committed by Nucleic \(why).
            """, attribution: attribution, sessionID: sessionID)
    }

    /// The merge commit of a session branch into its base.
    static func merge(branch: String, base: String, sessionID: String, attribution: SessionAttribution) -> String {
        withTrailers("\(subject(attribution))\n\nMerge branch '\(branch)' into \(base).", attribution: attribution, sessionID: sessionID)
    }

    /// The caller's squash message (or the session's subject when it is blank) with the trailers.
    static func squash(_ message: String, sessionID: String, attribution: SessionAttribution = SessionAttribution()) -> String {
        let text = message.trimmingWhitespace.isEmpty ? subject(attribution) : message
        return withTrailers(text, attribution: attribution, sessionID: sessionID)
    }

    /// The attribution's subject, or a generic one when the session had neither title nor prompt.
    static func subject(_ attribution: SessionAttribution) -> String {
        let line = attribution.subject.split(whereSeparator: \.isNewline).first.map(String.init)?.trimmingWhitespace ?? ""
        return line.isEmpty ? "Work of a Nucleic session" : line
    }

    /// `message` with the co-author trailers, then the session trailer.
    static func withTrailers(_ message: String, attribution: SessionAttribution, sessionID: String) -> String {
        withTrailers(message, attribution.coAuthors.map(\.trailer) + ["\(trailerKey): \(sessionID)"])
    }

    /// `message` with the `Nucleic-Session` trailer alone.
    static func withSessionTrailer(_ message: String, sessionID: String) -> String {
        withTrailers(message, ["\(trailerKey): \(sessionID)"])
    }

    /// `message` with `trailers`, ending in one newline, as `git interpret-trailers` would place
    /// them: appended to a final paragraph that is already trailers (`Co-authored-by: …`), else
    /// in a paragraph of their own. A trailer the message already carries is not added twice.
    static func withTrailers(_ message: String, _ trailers: [String]) -> String {
        var lines = message.split(separator: "\n", omittingEmptySubsequences: false).map { String($0.trimmingTrailingWhitespace) }
        while let last = lines.last, last.isEmpty { lines.removeLast() }
        while let first = lines.first, first.isEmpty { lines.removeFirst() }
        let missing = trailers.filter { !lines.contains($0) }
        if missing.isEmpty { return lines.joined(separator: "\n") + "\n" }
        let lastParagraphStart = (lines.lastIndex(of: "") ?? -1) + 1
        let lastParagraph = lines[lastParagraphStart...]
        // A final paragraph of trailers, not the title itself.
        let endsInTrailers = lastParagraphStart > 0 && !lastParagraph.isEmpty && lastParagraph.allSatisfy(isTrailerLine)
        if lines.isEmpty {
            lines = missing
        } else if endsInTrailers {
            lines += missing
        } else {
            lines += [""] + missing
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
