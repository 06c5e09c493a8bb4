/// Text with styles, measured in terminal columns: what the screen is built of before it becomes
/// plain or coloured lines.
public enum TextStyle: Sendable, Hashable {
    case plain, bold, dim, red, green, yellow, cyan, boldRed, boldYellow, inverse

    /// The SGR parameters of the style.
    var sgr: String {
        switch self {
        case .plain: "0"
        case .bold: "1"
        case .dim: "2"
        case .red: "31"
        case .green: "32"
        case .yellow: "33"
        case .cyan: "36"
        case .boldRed: "1;31"
        case .boldYellow: "1;33"
        case .inverse: "7"
        }
    }
}

/// One screen line as styled spans.
public struct ScreenLine: Sendable, Hashable {
    public var spans: [(text: String, style: TextStyle)]

    public init(_ spans: [(String, TextStyle)] = []) { self.spans = spans.map { (text: $0.0, style: $0.1) } }
    public init(_ text: String, _ style: TextStyle = .plain) { self.init([(text, style)]) }

    public static func == (a: ScreenLine, b: ScreenLine) -> Bool {
        a.spans.count == b.spans.count && zip(a.spans, b.spans).allSatisfy { $0.text == $1.text && $0.style == $1.style }
    }

    public func hash(into hasher: inout Hasher) {
        for s in spans {
            hasher.combine(s.text)
            hasher.combine(s.style)
        }
    }

    mutating func append(_ text: String, _ style: TextStyle = .plain) { spans.append((text: text, style: style)) }

    /// The line without trailing spaces (the driver clears each line's end anyway).
    func trimmed() -> ScreenLine {
        var out = self
        while let last = out.spans.last {
            let kept = String(last.text.reversed().drop { $0 == " " }.reversed())
            if kept.isEmpty { out.spans.removeLast(); continue }
            out.spans[out.spans.count - 1].text = kept
            break
        }
        return out
    }

    /// Columns the line takes.
    var width: Int { spans.reduce(0) { $0 + Columns.width($1.text) } }

    /// The line cut to `width` columns, the cut marked with `…`.
    func clipped(_ width: Int) -> ScreenLine {
        guard self.width > width else { return self }
        var out = ScreenLine()
        var left = max(0, width - 1)
        for s in spans {
            if left <= 0 { break }
            let piece = Columns.prefix(s.text, left)
            out.append(piece, s.style)
            left -= Columns.width(piece)
        }
        if width > 0 { out.append("…", spans.last?.style ?? .plain) }
        return out
    }

    /// The line as text: with SGR colour codes, or plain (`NO_COLOR`, not a terminal).
    func rendered(color: Bool) -> String {
        var text = ""
        for s in trimmed().spans where !s.text.isEmpty {
            if color, s.style != .plain { text += "\u{1B}[\(s.style.sgr)m" + s.text + "\u{1B}[0m" } else { text += s.text }
        }
        return text
    }
}

/// Terminal column widths: East Asian wide characters and most emoji take two columns,
/// combining marks none, the rest one. An approximation of `wcwidth` good enough to keep a line
/// from wrapping.
enum Columns {
    static func width(_ text: String) -> Int { text.unicodeScalars.reduce(0) { $0 + width($1) } }

    static func width(_ s: Unicode.Scalar) -> Int {
        let v = s.value
        if v < 0x20 || (0x7F..<0xA0).contains(v) { return 0 }
        if (0x0300...0x036F).contains(v) || (0x200B...0x200F).contains(v) || v == 0xFE0F { return 0 }
        if (0x1100...0x115F).contains(v) || (0x2E80...0xA4CF).contains(v) || (0xAC00...0xD7A3).contains(v)
            || (0xF900...0xFAFF).contains(v) || (0xFE30...0xFE4F).contains(v) || (0xFF00...0xFF60).contains(v)
            || (0xFFE0...0xFFE6).contains(v) || (0x1F300...0x1F64F).contains(v) || (0x1F900...0x1F9FF).contains(v)
            || (0x20000...0x3FFFD).contains(v) {
            return 2
        }
        return 1
    }

    /// The longest prefix of `text` that fits in `columns`.
    static func prefix(_ text: String, _ columns: Int) -> String {
        var out = ""
        var used = 0
        for c in text {
            let w = width(String(c))
            if used + w > columns { break }
            out.append(c)
            used += w
        }
        return out
    }

    /// `text` cut or padded with spaces to exactly `columns`.
    static func fit(_ text: String, _ columns: Int) -> String {
        let w = width(text)
        if w > columns { return columns > 0 ? prefix(text, columns - 1) + "…" : "" }
        return text + String(repeating: " ", count: columns - w)
    }

    /// A control-free copy: tabs become spaces, other control characters are dropped (agent
    /// output must not move the terminal's cursor).
    static func printable(_ text: String) -> String {
        var out = ""
        for s in text.unicodeScalars {
            if s == "\t" { out += "    " } else if s.value >= 0x20 && s.value != 0x7F && !(0x80..<0xA0).contains(s.value) { out.unicodeScalars.append(s) }
        }
        return out
    }
}
