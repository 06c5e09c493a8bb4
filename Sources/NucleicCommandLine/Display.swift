/// The options every command takes about how its output looks (docs/CLI.md, "Colour and
/// pager"): `--color[=WHEN]` and `--no-pager`, before or after the command, as in git.
public struct DisplayOptions: Sendable, Hashable {
    public enum ColorWhen: String, Sendable, CaseIterable {
        case auto, always, never
    }

    public var color: ColorWhen = .auto
    public var pager = true

    public init(color: ColorWhen = .auto, pager: Bool = true) {
        self.color = color
        self.pager = pager
    }

    /// Takes `--color`, `--color=WHEN`, `--color WHEN` and `--no-pager` out of `arguments`
    /// (wherever they are before `--`); a bare `--color` is `always`, as in git.
    public static func take(_ arguments: inout [String]) throws(UsageError) -> DisplayOptions {
        var options = DisplayOptions()
        var kept: [String] = []
        var i = 0
        let usage = "usage: nucleic [--color=auto|always|never] [--no-pager] <command> [options]"
        while i < arguments.count {
            let argument = arguments[i]
            i += 1
            if argument == "--" {
                kept += arguments[(i - 1)...]
                break
            }
            if argument == "--no-pager" {
                options.pager = false
            } else if argument == "--color" {
                if i < arguments.count, let when = ColorWhen(rawValue: arguments[i]) {
                    options.color = when
                    i += 1
                } else {
                    options.color = .always
                }
            } else if argument.hasPrefix("--color=") {
                let value = String(argument.dropFirst("--color=".count))
                guard let when = ColorWhen(rawValue: value) else {
                    throw UsageError(message: "--color takes auto, always or never, not '\(value)'", usage: usage)
                }
                options.color = when
            } else {
                kept.append(argument)
            }
        }
        arguments = kept
        return options
    }

    /// Whether output is coloured: `always` and `never` say so; `auto` colours a terminal unless
    /// NO_COLOR is set to something (https://no-color.org) or TERM is `dumb`.
    public func colors(isTerminal: Bool, environment: [String: String]) -> Bool {
        switch color {
        case .always: true
        case .never: false
        case .auto: isTerminal && (environment["NO_COLOR"] ?? "").isEmpty && environment["TERM"] != "dumb"
        }
    }

    /// The pager's command line, or nil for none: only on a terminal and without --no-pager;
    /// then NUCLEIC_PAGER (even empty), the `pager` setting, PAGER, else `less -FRX`. The first
    /// of them that is set decides; empty, `cat`, `off` and `false` mean no pager (`on` and
    /// `true` in the setting mean the default).
    public func pagerCommand(isTerminal: Bool, environment: [String: String], setting: String?) -> String? {
        guard pager, isTerminal else { return nil }
        func decided(_ value: String) -> String? {
            let v = value.trimmed
            return v.isEmpty || v == "cat" || v == "off" || v == "false" ? nil : v
        }
        if let value = environment["NUCLEIC_PAGER"] { return decided(value) }
        if let setting, setting != "on", setting != "true" { return decided(setting) }
        if let value = environment["PAGER"] { return decided(value) }
        return "less -FRX"
    }
}

extension String {
    var trimmed: String {
        var s = self[...]
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
