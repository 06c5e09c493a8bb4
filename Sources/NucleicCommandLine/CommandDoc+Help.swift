extension CommandTable {
    /// What `PROGRAM CMD --help` and `PROGRAM help CMD` print: the usage lines, the description,
    /// the subcommands, the options and the examples.
    public func help(_ doc: CommandDoc) -> String {
        var sections: [String] = []
        sections.append(synopsis(doc).enumerated().map { i, line in (i == 0 ? "usage: " : "       ") + line }.joined(separator: "\n"))
        sections.append(doc.description.isEmpty ? Self.sentence(doc.summary) : doc.description)
        if !doc.subcommands.isEmpty {
            let width = doc.subcommands.map { $0.path.last!.count }.max()! + 3
            sections.append("Commands:\n" + doc.subcommands.map { "  \($0.path.last!.padding(width))\($0.summary)" }.joined(separator: "\n")
                + "\n\nRun `\(program) help \(doc.name) COMMAND` for a command's options.")
        }
        let options = doc.options + [.help]
        sections.append("Options:\n" + Self.table(options.map { ($0.label, $0.text) }))
        if !doc.examples.isEmpty { sections.append("Examples:\n" + doc.examples.map { "  " + $0 }.joined(separator: "\n")) }
        return sections.joined(separator: "\n\n")
    }

    /// The usage lines with the program's name; a line that starts with a space continues the
    /// one before it, under its arguments.
    func synopsis(_ doc: CommandDoc) -> [String] {
        doc.synopsis.map { $0.hasPrefix(" ") ? String(repeating: " ", count: program.count + 1) + $0 : "\(program) \($0)" }
    }

    /// Two columns, the second wrapped at `width` with its indent; a label too long for the first
    /// column puts its text on the next line.
    static func table(_ rows: [(String, String)], indent: Int = 2, column: Int = 26, width: Int = 100) -> String {
        rows.map { label, text in
            let lead = String(repeating: " ", count: indent) + label
            let wrapped = wrap(text, width: width - column)
            let pad = String(repeating: " ", count: column)
            if lead.count + 1 > column {
                return lead + "\n" + wrapped.map { pad + $0 }.joined(separator: "\n")
            }
            return wrapped.enumerated().map { i, line in (i == 0 ? lead.padding(column) : pad) + line }.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Words wrapped into lines of at most `width` characters (a longer word gets a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty || lines.isEmpty { lines.append(line) }
        return lines
    }

    /// "does this" → "Does this."
    static func sentence(_ summary: String) -> String {
        guard let first = summary.first else { return summary }
        return first.uppercased() + summary.dropFirst() + (summary.hasSuffix(".") ? "" : ".")
    }
}

extension String {
    /// Padded with spaces to `width` characters (never cut).
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
