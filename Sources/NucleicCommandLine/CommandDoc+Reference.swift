/// The man page and the Markdown reference, rendered from the same table as the help.
extension CommandTable {
    /// `PROGRAM.1` in man(7) roff.
    /// `version` is the footer's source ("nucleic 0.1.0"); no date, so the page changes only
    /// with the table.
    public func manPage(section: String = "1", version: String) -> String {
        var out: [String] = [
            ".\\\" -*- coding: UTF-8 -*-",
            ".\\\" Generated from the command table by `\(program) __docs man`; do not edit.",
            ".TH \(program.uppercased()) \(section) \"\" \"\(version)\" \"User Commands\"",
            ".SH NAME", "\(program) \\- \(Self.roff(tagline))",
            ".SH SYNOPSIS", ".B \(program)", ".I command", "[\\fIoptions\\fR]",
            ".SH DESCRIPTION",
        ]
        // The overview without its usage line (the SYNOPSIS says it).
        out += Self.roffParagraphs(overview.hasPrefix("usage:") ? String(overview.drop { $0 != "\n" }) : overview)
        out.append(".SH COMMANDS")
        for doc in allCommands {
            out.append(".SS \"\(Self.roff(program + " " + doc.name))\"")
            out += [".nf"] + synopsis(doc).map(Self.roffLine) + [".fi"]
            out += Self.roffParagraphs(doc.description.isEmpty ? Self.sentence(doc.summary) : doc.description)
            for option in doc.options {
                out += [".TP", "\\fB\(Self.roff(option.label))\\fR", Self.roffLine(option.text)]
            }
            if !doc.examples.isEmpty {
                out += [".PP", "Examples:", ".RS", ".nf"] + doc.examples.map(Self.roffLine) + [".fi", ".RE"]
            }
        }
        out.append(".SH \"EXIT STATUS\"")
        for e in exitCodes { out += [".TP", "\\fB\(e.status)\\fR (\(e.code))", Self.roffLine(e.meaning)] }
        for topic in topics {
            out.append(".SH \"\(Self.roff(topic.title.uppercased()))\"")
            out += Self.roffParagraphs(topic.text)
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// The reference page (docs/CLI.md) in Markdown.
    public func markdown() -> String {
        var out = ["<!-- Generated from the command table by `\(program) __docs markdown`; do not edit: scripts/cli-docs.sh regenerates it. -->",
                   "", "# The `\(program)` command line", "", Self.sentence(tagline), "", "```text", overview, "```", "", "## Commands", ""]
        out += allCommands.map { "- [`\(program) \($0.name)`](#\(Self.anchor(program + " " + $0.name))): \($0.summary)" }
        for doc in allCommands {
            out += ["", "### \(program) \(doc.name)", "", "```text"] + synopsis(doc) + ["```", ""]
            out += Self.markdownParagraphs(doc.description.isEmpty ? Self.sentence(doc.summary) : doc.description)
            if !doc.options.isEmpty {
                out += ["", "| option | |", "|---|---|"]
                out += doc.options.map { "| `\($0.label)` | \(Self.cell($0.text)) |" }
            }
            if !doc.examples.isEmpty { out += ["", "```sh"] + doc.examples + ["```"] }
        }
        out += ["", "## Exit status", "", "| status | JSON code | meaning |", "|---|---|---|"]
        out += exitCodes.map { "| \($0.status) | `\($0.code)` | \(Self.cell($0.meaning)) |" }
        for topic in topics {
            out += ["", "## \(topic.title)", ""] + Self.markdownParagraphs(topic.text)
        }
        return out.joined(separator: "\n") + "\n"
    }

    // MARK: roff

    /// Text safe inside a roff line: backslashes and hyphens escaped.
    static func roff(_ text: String) -> String {
        text.replacing("\\", with: "\\e").replacing("-", with: "\\-")
    }

    /// A line of its own: also guarded against a leading `.` or `'` (a roff request).
    static func roffLine(_ text: String) -> String {
        let escaped = roff(text)
        return escaped.hasPrefix(".") || escaped.hasPrefix("'") ? "\\&" + escaped : escaped
    }

    /// Paragraphs as roff: prose filled, indented lines (tables, examples) kept as laid out.
    static func roffParagraphs(_ text: String) -> [String] {
        paragraphs(text).flatMap { lines -> [String] in
            [".PP"] + runs(lines).flatMap { run in run.laidOut ? [".nf"] + run.lines.map(roffLine) + [".fi"] : run.lines.map(roffLine) }
        }
    }

    // MARK: Markdown

    /// Paragraphs as Markdown: prose as it is, indented lines in a text block.
    static func markdownParagraphs(_ text: String) -> [String] {
        var out: [String] = []
        for lines in paragraphs(text) {
            for run in runs(lines) {
                if !out.isEmpty { out.append("") }
                out += run.laidOut ? ["```text"] + run.lines + ["```"] : run.lines
            }
        }
        return out
    }

    /// A table cell: pipes escaped.
    static func cell(_ text: String) -> String { text.replacing("|", with: "\\|") }

    /// GitHub's heading anchor: lower case, spaces to hyphens, punctuation dropped.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { $0 == " " ? "-" : ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") ? $0 : nil })
    }

    /// A paragraph's lines in runs: prose, and indented lines (`laidOut`: kept as they are).
    static func runs(_ lines: [String]) -> [(laidOut: Bool, lines: [String])] {
        var result: [(laidOut: Bool, lines: [String])] = []
        for line in lines {
            let laidOut = line.hasPrefix(" ")
            if let last = result.last, last.laidOut == laidOut {
                result[result.count - 1].lines.append(line)
            } else {
                result.append((laidOut, [line]))
            }
        }
        return result
    }

    /// Paragraphs: runs of lines between blank ones.
    static func paragraphs(_ text: String) -> [[String]] {
        var result: [[String]] = []
        var current: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.allSatisfy(\.isWhitespace) {
                if !current.isEmpty { result.append(current) }
                current = []
            } else {
                current.append(String(line))
            }
        }
        if !current.isEmpty { result.append(current) }
        return result
    }
}
