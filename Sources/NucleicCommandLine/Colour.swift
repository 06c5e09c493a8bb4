import Synchronization

/// ANSI colour for the human output, on or off for the whole process (set once at start from
/// `DisplayOptions.colors`). Painting with colour off returns the text unchanged, so output
/// code paints unconditionally.
public enum Colour {
    public enum Style: String, Sendable {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36"
        case boldRed = "1;31", boldGreen = "1;32", boldYellow = "1;33"
    }

    private static let on = Atomic<Bool>(false)

    public static var enabled: Bool {
        get { on.load(ordering: .relaxed) }
        set { on.store(newValue, ordering: .relaxed) }
    }

    public static func paint(_ text: String, _ style: Style) -> String { paint(text, style, enabled: enabled) }

    public static func paint(_ text: String, _ style: Style, enabled: Bool) -> String {
        enabled && !text.isEmpty ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// A unified diff, each line coloured as git colours it: file headers bold, hunk headers
    /// cyan, additions green, removals red.
    public static func diff(_ patch: String, enabled: Bool = Colour.enabled) -> String {
        guard enabled else { return patch }
        return patch.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            let text = String(line)
            if text.hasPrefix("diff --git") || text.hasPrefix("+++ ") || text.hasPrefix("--- ") || text.hasPrefix("index ") {
                return paint(text, .bold, enabled: true)
            }
            if text.hasPrefix("@@") { return paint(text, .cyan, enabled: true) }
            if text.hasPrefix("+") { return paint(text, .green, enabled: true) }
            if text.hasPrefix("-") { return paint(text, .red, enabled: true) }
            return text
        }.joined(separator: "\n")
    }

    /// A risk's name, coloured by how much it can do: readOnly dim, write and execute plain-ish,
    /// unknown and network yellow, hostExec and destructive red.
    public static func risk(_ name: String, enabled: Bool = Colour.enabled) -> String {
        switch name.trimmed {
        case "readOnly": paint(name, .dim, enabled: enabled)
        case "write", "execute": paint(name, .blue, enabled: enabled)
        case "unknown", "network": paint(name, .yellow, enabled: enabled)
        case "hostExec", "destructive": paint(name, .boldRed, enabled: enabled)
        default: name
        }
    }
}
