public import NucleicProtocol

/// Names the host makes and resolves: branch slugs from titles, ids from prefixes.
public enum Naming {
    /// A branch-safe slug of a title: lowercase ASCII letters and digits joined by single
    /// hyphens, at most `maxLength` characters, never empty (`session` when nothing is left).
    public static func slug(_ title: String, maxLength: Int = 40) -> String {
        var out = ""
        var pendingHyphen = false
        for scalar in title.lowercased().unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(Character(scalar)) {
                if pendingHyphen && !out.isEmpty { out.append("-") }
                pendingHyphen = false
                out.unicodeScalars.append(scalar)
                if out.count > maxLength { break }
            } else {
                pendingHyphen = true
            }
        }
        if out.count > maxLength {
            // Cut at the last word boundary that fits, unless that would lose most of it.
            let cut = out.prefix(maxLength + 1)
            if let hyphen = cut.lastIndex(of: "-"), out.distance(from: out.startIndex, to: hyphen) > maxLength / 2 {
                out = String(out[..<hyphen])
            } else {
                out = String(out.prefix(maxLength))
            }
        }
        while out.hasSuffix("-") { out.removeLast() }
        return out.isEmpty ? "session" : out
    }

    /// A title from a prompt: its first line, cut at a word boundary near `maxLength`.
    public static func title(fromPrompt prompt: String, maxLength: Int = 60) -> String {
        let firstLine = prompt.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? prompt
        let trimmed = firstLine.trimmingSpaces()
        guard trimmed.count > maxLength else { return trimmed.isEmpty ? "untitled" : trimmed }
        let cut = trimmed.prefix(maxLength)
        if let space = cut.lastIndex(of: " "), cut.distance(from: cut.startIndex, to: space) > maxLength / 2 {
            return String(cut[..<space]) + "…"
        }
        return String(cut) + "…"
    }

    public enum PrefixMatch<ID: Hashable>: Hashable {
        case one(ID)
        case none
        case ambiguous([ID])
    }

    /// The one id `prefix` names (case-insensitive); a full id always matches itself.
    public static func resolve<Tag>(_ prefix: String, among ids: some Sequence<Identifier<Tag>>) -> PrefixMatch<Identifier<Tag>> {
        let needle = prefix.lowercased()
        guard !needle.isEmpty else { return .none }
        var matches: [Identifier<Tag>] = []
        for id in ids {
            if id.rawValue == needle { return .one(id) }
            if id.rawValue.hasPrefix(needle) { matches.append(id) }
        }
        switch matches.count {
        case 0: return .none
        case 1: return .one(matches[0])
        default: return .ambiguous(matches.sorted())
        }
    }
}

extension Naming {
    /// The shortest part of an id that names it by prefix or suffix, as git's shortest
    /// abbreviation: two hex digits name one id in 256, so `show 99` with no session 99 would
    /// show a session whose id happens to end in 99.
    public static let shortestIDPart = 4

    /// The one session `reference` names, trying in order: its handle (`12`, or `#12`), its
    /// branch (`nucleic/fix-login-0f3a9c`, or without the `nucleic/`), its id, a unique prefix of
    /// its id, a unique suffix of its id (prefix and suffix of at least `shortestIDPart`
    /// characters). The first kind that matches anything decides: two sessions whose ids both
    /// start with the reference are ambiguous even if one id also ends with it.
    public static func resolve(session reference: String, among sessions: [SessionSummary]) -> PrefixMatch<SessionSummary> {
        resolve(reference, among: sessions, handle: \.handle, id: \.sessionID.rawValue) { session, needle in
            session.branch.lowercased() == needle || session.branch.lowercased() == "nucleic/" + needle
        }
    }

    /// The one approval `reference` names: its handle (`12.1`), its id, a unique prefix of its
    /// id, a unique suffix of its id (of at least `shortestIDPart` characters), in that order.
    public static func resolve(approval reference: String, among approvals: [ApprovalRequest]) -> PrefixMatch<ApprovalRequest> {
        resolve(reference, among: approvals, handle: \.handle, id: \.id.rawValue)
    }

    /// The one item `reference` names, trying in order: its handle (with or without a leading
    /// `#`), `name` (another exact name, such as a branch), its id, a unique prefix of its id, a
    /// unique suffix of its id. The first stage that matches anything decides; ambiguous
    /// matches come sorted by id.
    private static func resolve<T: Hashable>(
        _ reference: String, among items: [T], handle: KeyPath<T, String?>, id: KeyPath<T, String>,
        name: ((T, String) -> Bool)? = nil
    ) -> PrefixMatch<T> {
        let needle = reference.lowercased()
        guard !needle.isEmpty else { return .none }
        let handleNeedle = needle.hasPrefix("#") ? String(needle.dropFirst()) : needle
        var stages: [(T) -> Bool] = [{ $0[keyPath: handle]?.lowercased() == handleNeedle }]
        if let name { stages.append { name($0, needle) } }
        stages.append { $0[keyPath: id] == needle }
        if needle.count >= shortestIDPart {
            stages += [{ $0[keyPath: id].hasPrefix(needle) }, { $0[keyPath: id].hasSuffix(needle) }]
        }
        for stage in stages {
            let matches = items.filter(stage)
            if matches.count == 1 { return .one(matches[0]) }
            if matches.count > 1 { return .ambiguous(matches.sorted { $0[keyPath: id] < $1[keyPath: id] }) }
        }
        return .none
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let first = s.first, first.isWhitespace { s.removeFirst() }
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
