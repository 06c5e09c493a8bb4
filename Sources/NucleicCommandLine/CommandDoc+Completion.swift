/// Shell completion from the command table: the scripts `PROGRAM completion SHELL` prints are
/// thin, and ask `PROGRAM __complete -- WORD...` for the candidates, so every shell completes
/// the same commands, options and live handles.
extension CommandTable {
    /// The candidates for the last of `words` (the words after the program; the last is the one
    /// being completed, empty for a new word). `live` answers the kinds only a running daemon or
    /// the settings know (sessions, approvals, projects, devices, setting keys).
    public func completions(_ words: [String], live: (ArgumentKind) -> [String]) -> [String] {
        describedCompletions(words) { live($0).map { Candidate($0) } }.map(\.word)
    }

    /// The candidates with what each is (a command's summary, an option's text, a session's
    /// title), for the shells that show it (fish).
    public func describedCompletions(_ words: [String], live: (ArgumentKind) -> [Candidate]) -> [Candidate] {
        guard let current = words.last else { return [] }
        // The options every command takes say nothing about which command it is.
        let before = words.dropLast().filter { !$0.hasPrefix("--color") && $0 != "--no-pager" }
        let commandCandidates = commands.map { Candidate($0.path[0], $0.summary) }
        if before.isEmpty { return commandCandidates.filter { $0.word.hasPrefix(current) } }
        guard let (doc, depth) = resolve(before) else { return [] }
        let rest = Array(before.dropFirst(depth))
        let options = doc.options + globalOptions + [.help]
        func option(_ word: String) -> OptionDoc? {
            if word.hasPrefix("--") { return options.first { $0.name == word.dropFirst(2) } }
            if word.count == 2, word.hasPrefix("-") { return options.first { $0.short == word.last } }
            return nil
        }
        func values(_ kind: ArgumentKind, _ prefix: String) -> [Candidate] {
            let all: [Candidate]
            switch kind {
            case .none, .text, .file: all = []
            case .choice(let words): all = words.map { Candidate($0) }
            case .command: all = commandCandidates
            case .session, .approval, .project, .device, .configKey: all = live(kind)
            }
            return all.filter { $0.word.hasPrefix(prefix) }
        }
        // The value of the option before it.
        if let previous = rest.last, let o = option(previous), o.value != nil { return values(o.kind, current) }
        // `--name=VALUE`.
        if current.hasPrefix("--"), let eq = current.firstIndex(of: "=") {
            guard let o = option(String(current[..<eq])) else { return [] }
            let name = current[...eq]
            return values(o.kind, String(current[current.index(after: eq)...])).map { Candidate(name + $0.word, $0.description) }
        }
        if current.hasPrefix("-") {
            return options.map { Candidate("--" + $0.name, $0.text) }.filter { $0.word.hasPrefix(current) }
        }
        if rest.isEmpty, !doc.subcommands.isEmpty {
            return doc.subcommands.map { Candidate($0.path.last!, $0.summary) }.filter { $0.word.hasPrefix(current) }
        }
        // The positional this word is: count the ones before it, skipping options and their values.
        var count = 0
        var skipValue = false
        for word in rest {
            if skipValue { skipValue = false; continue }
            if word == "--" { continue }
            if word.hasPrefix("-"), word.count > 1 {
                if let o = option(word), o.value != nil { skipValue = true }
                continue
            }
            count += 1
        }
        guard count < doc.arguments.count else { return [] }
        return values(doc.arguments[count], current)
    }

    /// The options every command takes (`--color`, `--no-pager`).
    public var globalOptions: [OptionDoc] {
        [OptionDoc("color", value: "WHEN", "colour: auto, always or never", kind: .choice(["auto", "always", "never"])),
         OptionDoc("no-pager", "no pager")]
    }

    /// The completion script for `shell` (bash, zsh or fish); nil for another.
    public func completionScript(_ shell: String) -> String? {
        switch shell {
        case "bash":
            return """
                # bash completion for \(program): `\(program) completion bash`. Candidates come from
                # `\(program) __complete`, which asks a running daemon for handles (it never starts one).
                _\(program)() {
                    local line="${COMP_LINE:0:COMP_POINT}"
                    local -a words
                    read -ra words <<< "$line"
                    [[ "$line" =~ [[:space:]]$ ]] && words+=("")
                    local cur="${words[${#words[@]}-1]}"
                    local IFS=$'\\n'
                    COMPREPLY=($(command "${words[0]}" __complete -- "${words[@]:1}" 2>/dev/null))
                    # bash splits --opt=value at the '=': offer only the part after it.
                    if [[ "$cur" == *=* && "$COMP_WORDBREAKS" == *=* ]]; then
                        local i
                        for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]="${COMPREPLY[i]#*=}"; done
                    fi
                }
                complete -o default -F _\(program) \(program)

                """
        case "zsh":
            return """
                #compdef \(program)
                # zsh completion for \(program): `\(program) completion zsh`. Candidates come from
                # `\(program) __complete`, which asks a running daemon for handles (it never starts one).
                _\(program)() {
                    local -a candidates
                    candidates=("${(@f)$(${words[1]} __complete -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
                    if (( ${#candidates} )) && [[ -n "${candidates[1]}" ]]; then
                        compadd -Q -- "${candidates[@]}"
                    else
                        _files
                    fi
                }
                if [[ "${funcstack[1]}" = "_\(program)" ]]; then
                    _\(program) "$@"
                else
                    compdef _\(program) \(program)
                fi

                """
        case "fish":
            return """
                # fish completion for \(program): `\(program) completion fish`. Candidates come from
                # `\(program) __complete`, which asks a running daemon for handles (it never starts one).
                function __\(program)_complete
                    set -l tokens (commandline -opc)
                    set -l current (commandline -ct)
                    $tokens[1] __complete --describe -- $tokens[2..-1] "$current" 2>/dev/null
                end
                complete -c \(program) -f -a '(__\(program)_complete)'

                """
        default:
            return nil
        }
    }
}

/// A completion candidate and what it is (empty when nothing is to say).
public struct Candidate: Sendable, Hashable {
    public let word: String
    public let description: String

    public init(_ word: String, _ description: String = "") {
        self.word = word
        self.description = description
    }
}
