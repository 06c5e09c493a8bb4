import NucleicApprovals
import Testing

/// A compact rendering of a parse tree, so tables can state the structure they expect:
/// words in ⟨⟩ with their value, `$(…)` rendered as the outline of the script inside.
func outline(_ script: ShellScript) -> String {
    script.items.map { item in
        let andOr = item.andOr
        var text = outline(andOr.pipelines[0])
        for (connector, pipeline) in zip(andOr.connectors, andOr.pipelines.dropFirst()) { text += " \(connector.rawValue) " + outline(pipeline) }
        return text + (item.background ? " &" : "")
    }.joined(separator: " ; ")
}

func outline(_ pipeline: Pipeline) -> String {
    (pipeline.negated ? "! " : "") + pipeline.commands.map(outline).joined(separator: " | ")
}

func outline(_ command: ShellCommand) -> String {
    func redirs(_ r: [Redirection]) -> String { r.map { " " + outline($0) }.joined() }
    switch command {
    case .simple(let s):
        let parts = s.assignments.map { "\($0.name)=" + outline($0.value) } + s.words.map(outline)
        return parts.joined(separator: " ") + redirs(s.redirections)
    case .subshell(let body, let r): return "(" + outline(body) + ")" + redirs(r)
    case .group(let body, let r): return "{" + outline(body) + "}" + redirs(r)
    case .ifClause(let branches, let elseBody, let r):
        let b = branches.map { "if " + outline($0.condition) + " then " + outline($0.body) }.joined(separator: " el")
        return b + (elseBody.map { " else " + outline($0) } ?? "") + " fi" + redirs(r)
    case .loop(let until, let c, let body, let r): return (until ? "until " : "while ") + outline(c) + " do " + outline(body) + " done" + redirs(r)
    case .forLoop(let v, let items, let body, let r):
        return "for \(v)" + (items.map { " in " + $0.map(outline).joined(separator: " ") } ?? "") + " do " + outline(body) + " done" + redirs(r)
    case .arithmeticFor(let h, let body, _): return "for ((\(h))) do " + outline(body) + " done"
    case .caseClause(let subject, let items, _):
        return "case " + outline(subject) + " in " + items.map { $0.patterns.map(outline).joined(separator: "|") + ") " + outline($0.body) }.joined(separator: " ;; ") + " esac"
    case .conditional(let words, _): return "[[ " + words.map(outline).joined(separator: " ") + " ]]"
    case .arithmetic(let w, _): return outline(w)
    case .function(let name, let body): return "\(name)() " + outline(body)
    }
}

func outline(_ r: Redirection) -> String {
    (r.fd.map(String.init) ?? "") + r.op.rawValue + outline(r.target) + (r.hereDocument.map { "«" + ($0.staticHereText ?? outline($0)) + "»" } ?? "")
}

func outline(_ word: ShellWord) -> String {
    "⟨" + word.parts.map { part -> String in
        switch part {
        case .literal(let t, let quoted): quoted ? t : t
        case .variable(let name, _): "$" + name
        case .parameter(let inner, _, _): "${" + inner + "}"
        case .commandSubstitution(let s, _, _): "$(" + outline(s) + ")"
        case .processSubstitution(let s, _, let input): (input ? "<(" : ">(") + outline(s) + ")"
        case .arithmetic(let inner, _): "$((" + inner + "))"
        case .tilde(let user): "~" + user
        }
    }.joined() + "⟩"
}

extension ShellWord {
    var staticHereText: String? {
        parts.allSatisfy({ if case .literal = $0 { true } else { false } }) ? parts.map { if case .literal(let t, _) = $0 { t } else { "" } }.joined() : nil
    }
}

func parsed(_ source: String) -> ShellScript? {
    if case .success(let s) = ShellParser.parse(source) { return s }
    return nil
}

@Suite struct ShellParserTests {
    @Test(arguments: [
        // simple commands, quoting
        ("ls", "⟨ls⟩"),
        ("ls -la  src/", "⟨ls⟩ ⟨-la⟩ ⟨src/⟩"),
        ("echo 'a && b'", "⟨echo⟩ ⟨a && b⟩"),
        ("echo \"a; b | c\"", "⟨echo⟩ ⟨a; b | c⟩"),
        ("echo a\\;b", "⟨echo⟩ ⟨a;b⟩"),
        ("echo \"it's\" 'say \"hi\"'", "⟨echo⟩ ⟨it's⟩ ⟨say \"hi\"⟩"),
        ("echo $'tab\\there\\x41\\101'", "⟨echo⟩ ⟨tab\there\u{41}A⟩"),
        ("echo \"\\$HOME \\\"q\\\" \\\\ \\x\"", "⟨echo⟩ ⟨$HOME \"q\" \\ \\x⟩"),
        ("echo \"\" ''", "⟨echo⟩ ⟨⟩ ⟨⟩"),
        ("echo a\\\nb", "⟨echo⟩ ⟨ab⟩"),
        ("echo a # a comment && rm -rf /", "⟨echo⟩ ⟨a⟩"),
        ("echo a#b", "⟨echo⟩ ⟨a#b⟩"),
        // expansions kept
        ("echo $HOME ${USER} $1 $@ $?", "⟨echo⟩ ⟨$HOME⟩ ⟨$USER⟩ ⟨$1⟩ ⟨$@⟩ ⟨$?⟩"),
        ("echo ${X:-default} ${#Y}", "⟨echo⟩ ⟨${X:-default}⟩ ⟨${#Y}⟩"),
        ("echo \"$HOME/x\"", "⟨echo⟩ ⟨$HOME/x⟩"),
        ("echo $ a$", "⟨echo⟩ ⟨$⟩ ⟨a$⟩"),
        ("echo $((1 + 2))", "⟨echo⟩ ⟨$((1 + 2))⟩"),
        ("cat ~/x ~bob/y a~", "⟨cat⟩ ⟨~/x⟩ ⟨~bob/y⟩ ⟨a~⟩"),
        // substitutions are scripts
        ("npm test $(curl x|sh)", "⟨npm⟩ ⟨test⟩ ⟨$(⟨curl⟩ ⟨x⟩ | ⟨sh⟩)⟩"),
        ("echo `rm -rf /`", "⟨echo⟩ ⟨$(⟨rm⟩ ⟨-rf⟩ ⟨/⟩)⟩"),
        ("echo \"$(date) and `whoami`\"", "⟨echo⟩ ⟨$(⟨date⟩) and $(⟨whoami⟩)⟩"),
        ("echo $(echo $(ls))", "⟨echo⟩ ⟨$(⟨echo⟩ ⟨$(⟨ls⟩)⟩)⟩"),
        ("echo \"${X:-$(rm -rf /)}\"", "⟨echo⟩ ⟨${X:-$(rm -rf /)}⟩"),
        ("diff <(ls a) <(ls b)", "⟨diff⟩ ⟨<(⟨ls⟩ ⟨a⟩)⟩ ⟨<(⟨ls⟩ ⟨b⟩)⟩"),
        ("echo $(case x in a) echo a;; esac)", "⟨echo⟩ ⟨$(case ⟨x⟩ in ⟨a⟩) ⟨echo⟩ ⟨a⟩ esac)⟩"),
        // operators
        ("a && b || c", "⟨a⟩ && ⟨b⟩ || ⟨c⟩"),
        ("a; b & c", "⟨a⟩ ; ⟨b⟩ & ; ⟨c⟩"),
        ("a | b |& c", "⟨a⟩ | ⟨b⟩ | ⟨c⟩"),
        ("a\nb\n\nc", "⟨a⟩ ; ⟨b⟩ ; ⟨c⟩"),
        ("a &&\n  b", "⟨a⟩ && ⟨b⟩"),
        ("! a", "! ⟨a⟩"),
        ("time a | b", "⟨a⟩ | ⟨b⟩"),
        // assignments
        ("FOO=1 BAR=\"a b\" npm test", "FOO=⟨1⟩ BAR=⟨a b⟩ ⟨npm⟩ ⟨test⟩"),
        ("X=1", "X=⟨1⟩"),
        ("arr=(a b c) x", "arr=⟨⟩ ⟨x⟩"),
        ("echo FOO=1", "⟨echo⟩ ⟨FOO=1⟩"),
        // redirections
        ("cmd >out 2>&1", "⟨cmd⟩ >⟨out⟩ 2>&⟨1⟩"),
        ("cmd >> log 2> err < in", "⟨cmd⟩ >>⟨log⟩ 2>⟨err⟩ <⟨in⟩"),
        ("cmd &> all", "⟨cmd⟩ &>⟨all⟩"),
        ("cmd &>> all", "⟨cmd⟩ &>>⟨all⟩"),
        ("cmd >| f <> g", "⟨cmd⟩ >|⟨f⟩ <>⟨g⟩"),
        ("cat <<< 'hello'", "⟨cat⟩ <<<⟨hello⟩"),
        (">/dev/sda", " >⟨/dev/sda⟩"),
        ("echo x >\"$HOME/.bashrc\"", "⟨echo⟩ ⟨x⟩ >⟨$HOME/.bashrc⟩"),
        ("cat < <(ls)", "⟨cat⟩ <⟨<(⟨ls⟩)⟩"),
        // here-documents
        ("cat <<EOF > f\nhello $USER\nEOF\necho done", "⟨cat⟩ <<⟨EOF⟩«⟨hello $USER\n⟩» >⟨f⟩ ; ⟨echo⟩ ⟨done⟩"),
        ("cat <<'EOF'\n$(rm -rf /)\nEOF", "⟨cat⟩ <<⟨EOF⟩«$(rm -rf /)\n»"),
        ("cat <<-EOF\n\tindented\n\tEOF", "⟨cat⟩ <<-⟨EOF⟩«indented\n»"),
        ("cat <<A; cat <<B\na\nA\nb\nB", "⟨cat⟩ <<⟨A⟩«a\n» ; ⟨cat⟩ <<⟨B⟩«b\n»"),
        ("cat <<EOF\n$(whoami)\nEOF", "⟨cat⟩ <<⟨EOF⟩«⟨$(⟨whoami⟩)\n⟩»"),
        // compound commands
        ("(cd src && ls)", "(⟨cd⟩ ⟨src⟩ && ⟨ls⟩)"),
        ("{ a; b; } > out", "{⟨a⟩ ; ⟨b⟩} >⟨out⟩"),
        ("if [ -f x ]; then rm x; else touch x; fi", "if ⟨[⟩ ⟨-f⟩ ⟨x⟩ ⟨]⟩ then ⟨rm⟩ ⟨x⟩ else ⟨touch⟩ ⟨x⟩ fi"),
        ("if a; then b; elif c; then d; fi", "if ⟨a⟩ then ⟨b⟩ elif ⟨c⟩ then ⟨d⟩ fi"),
        ("while read l; do echo $l; done < f", "while ⟨read⟩ ⟨l⟩ do ⟨echo⟩ ⟨$l⟩ done <⟨f⟩"),
        ("until false; do :; done", "until ⟨false⟩ do ⟨:⟩ done"),
        ("for f in *.swift; do wc -l $f; done", "for f in ⟨*.swift⟩ do ⟨wc⟩ ⟨-l⟩ ⟨$f⟩ done"),
        ("for f\ndo echo $f\ndone", "for f do ⟨echo⟩ ⟨$f⟩ done"),
        ("for ((i=0; i<3; i++)); do echo $i; done", "for ((i=0; i<3; i++)) do ⟨echo⟩ ⟨$i⟩ done"),
        ("case $x in a|b) echo ab;; *) echo other;; esac", "case ⟨$x⟩ in ⟨a⟩|⟨b⟩) ⟨echo⟩ ⟨ab⟩ ;; ⟨*⟩) ⟨echo⟩ ⟨other⟩ esac"),
        ("[[ -n $x && $y == a* ]] && echo y", "[[ ⟨-n⟩ ⟨$x⟩ ⟨&&⟩ ⟨$y⟩ ⟨==⟩ ⟨a*⟩ ]] && ⟨echo⟩ ⟨y⟩"),
        ("(( x > 1 )) && echo big", "⟨$(( x > 1 ))⟩ && ⟨echo⟩ ⟨big⟩"),
        ("f() { rm -rf /; }; f", "f() {⟨rm⟩ ⟨-rf⟩ ⟨/⟩} ; ⟨f⟩"),
        ("function g { ls; }", "g() {⟨ls⟩}"),
        ("echo done fi then", "⟨echo⟩ ⟨done⟩ ⟨fi⟩ ⟨then⟩"),
        ("echo {a,b} }", "⟨echo⟩ ⟨{a,b}⟩ ⟨}⟩"),
    ])
    func parsesStructure(_ source: String, _ expected: String) {
        guard let script = parsed(source) else {
            Issue.record("\(source) did not parse: \(ShellParser.parse(source))")
            return
        }
        #expect(outline(script) == expected, "\(source)")
    }

    @Test(arguments: [
        ("echo 'unterminated", "unterminated single quote"),
        ("echo \"unterminated", "unterminated double quote"),
        ("echo $(ls", "unterminated ‘$(’"),
        ("echo `ls", "unterminated backquote"),
        ("echo ${X", "unterminated ‘${’"),
        ("a &&", "‘&&’ is not followed by a command"),
        ("a |", "‘|’ is not followed by a command"),
        ("| a", "expected a command"),
        ("; a", "expected a command"),
        ("if a; then b", "expected ‘fi’"),
        ("while a; do b", "expected ‘done’"),
        ("for x in a b; echo", "expected ‘do’"),
        ("case x in a) b", "expected ‘;;’ or ‘esac’"),
        ("(a", "expected ‘)’"),
        ("a )", "unexpected ‘)’"),
        ("{ a; ", "expected ‘}’"),
        ("fi", "unexpected ‘fi’"),
        ("echo >", "has no target"),
        ("echo x > ;", "has no target"),
        ("[[ -n x", "expected ‘]]’"),
        ("echo a (", "unexpected ‘(’"),
        ("echo (", "expected ‘)’ after ‘echo(’"),
        ("for 1x in a; do b; done", "not a valid for-loop variable"),
    ])
    func unparseableInputIsAValue(_ source: String, _ message: String) {
        switch ShellParser.parse(source) {
        case .success(let s): Issue.record("\(source) parsed as \(outline(s))")
        case .failure(let error): #expect(error.message.contains(message), "\(source): \(error)")
        }
    }

    @Test func depthIsLimited() {
        let deep = String(repeating: "( ", count: 200) + "ls" + String(repeating: ")", count: 200)
        guard case .failure(let error) = ShellParser.parse(deep) else { Issue.record("parsed"); return }
        #expect(error.message.contains("nests more than"))
        let subs = String(repeating: "$(echo ", count: 100) + "x" + String(repeating: ")", count: 100)
        guard case .failure = ShellParser.parse(subs) else { Issue.record("parsed"); return }
        let backquotes = "echo `echo \\`echo \\\\\\`ls\\\\\\`\\``"
        #expect(parsed(backquotes)?.commands().compactMap(\.name) == ["ls", "echo", "echo", "echo"])  // innermost runs first
        #expect(parsed(String(repeating: "( ", count: 20) + "ls" + String(repeating: ")", count: 20)) != nil)
        // `((` opens arithmetic when a matching `))` closes it, as in bash.
        #expect(parsed("((ls))").map(outline) == "⟨$((ls))⟩")
    }

    /// Garbage, truncations of real commands and random bytes never trap.
    @Test func neverCrashes() {
        let seeds = [
            "FOO=1 npm test && git push -f", "cat <<EOF | sh\nrm -rf /\nEOF\n", "echo \"$(echo 'a\"b')\" `x` ${y:-$(z)}",
            "for f in $(ls); do case $f in *.c) gcc $f;; esac; done", "[[ $(a) ]] && (( $(b) )) || { c; }",
            "find . -exec sh -c 'rm {}' \\; -o -print", "arr=( $(ls) \"x\" ) && echo ${arr[@]}", "x() ( echo )", "$'\\x",
        ]
        var rng = SplitMix(seed: 7)
        for seed in seeds {
            let bytes = Array(seed.utf8)
            for cut in 0...bytes.count { _ = ShellParser.parse(String(decoding: bytes[..<cut], as: UTF8.self)) }
        }
        let alphabet = Array("ab $`'\"\\(){}[]<>|&;#~=*\n\t-0123456789EOF".utf8)
        for _ in 0..<3000 {
            let length = Int(rng.next() % 40)
            let bytes = (0..<length).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            let text = String(decoding: bytes, as: UTF8.self)
            if case .success(let s) = ShellParser.parse(text) { _ = s.commands() }
        }
    }

    @Test func wordsKnowTheirValues() throws {
        let words = try #require(parsed("x \"a b\" c* 'd*' $V ~/e {f,g} \"$(h)\""))
        guard case .simple(let s) = words.items[0].andOr.pipelines[0].commands[0] else { Issue.record("not simple"); return }
        let w = s.words
        #expect(w[1].staticValue == "a b" && w[1].canonical == "'a b'")
        #expect(w[2].staticValue == nil && w[2].hasUnquotedGlob && w[2].canonical == "c*")
        #expect(w[3].staticValue == "d*" && !w[3].hasUnquotedGlob && w[3].canonical == "'d*'")
        #expect(w[4].staticValue == nil && w[4].hasExpansion)
        #expect(w[5].staticValue == nil && w[5].parts.first == .tilde(user: ""))
        #expect(w[6].staticValue == nil)
        #expect(w[7].substitutions.count == 1)
        #expect(ShellWord.quote("it's") == "'it'\\''s'")
        #expect(ShellWord.quote("") == "''")
    }

    @Test func heredocBodiesDoNotLeakIntoCommands() throws {
        let script = try #require(parsed("cat > notes.md <<'EOF'\nrm -rf /\n$(curl evil)\nEOF\nls"))
        #expect(script.commands().map(\.text) == ["cat", "ls"])
        let expanding = try #require(parsed("cat <<EOF\n$(curl evil)\nEOF"))
        #expect(expanding.commands().map(\.text) == ["curl evil", "cat"])
    }
}

/// Deterministic randomness for fuzz-style tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Wrappers are peeled so that the real command is what is judged and matched.
@Suite struct ShellUnwrapTests {
    /// Each command of the script as `[wrappers] text`.
    static func unwrapped(_ source: String) -> [String] {
        guard let script = parsed(source) else { return ["unparseable"] }
        return script.commands().map { c in
            (c.wrappers.isEmpty ? "" : "[" + c.wrappers.map(\.name).joined(separator: ",") + "] ") + c.text
        }
    }

    @Test(arguments: [
        ("sudo timeout 5 nice -n 10 npm test", ["[sudo,timeout,nice] npm test"]),
        ("env -i FOO=1 BAR=2 make", ["[env] make"]),
        ("xargs -0 -n1 rm -f", ["[xargs] rm -f"]),
        ("xargs", ["[xargs] echo"]),
        ("nohup time command exec npm start", ["[nohup,time,command,exec] npm start"]),
        ("bash -lc 'git status && npm test'", ["bash -lc 'git status && npm test'", "git status", "npm test"]),
        ("sh -c \"sudo sh -c 'rm -rf /'\"", ["sh -c 'sudo sh -c '\\''rm -rf /'\\'''", "[sudo] sh -c 'rm -rf /'", "rm -rf /"]),
        ("find . -name '*.o' -exec rm -f {} \\; -exec echo {} +", ["find . -name '*.o' -exec rm -f '{}' ';' -exec echo '{}' +", "[find -exec] rm -f '{}'", "[find -exec] echo '{}'"]),
        ("fd -e o -x rm", ["fd -e o -x rm", "[fd -x] rm"]),
        ("watch -n 1 'ls | wc -l'", ["watch -n 1 'ls | wc -l'", "ls", "wc -l"]),
        ("eval 'ls; pwd'", ["eval 'ls; pwd'", "ls", "pwd"]),
        ("trap 'rm -f /tmp/x' EXIT", ["trap 'rm -f /tmp/x' EXIT", "rm -f /tmp/x"]),
        ("env -S 'rm -rf x'", ["[env -S] env -S 'rm -rf x'", "rm -rf x"]),
        ("su -c 'whoami' root", ["[su] su -c whoami root", "whoami"]),
        ("timeout -s KILL 5 stdbuf -oL ionice -c3 setsid busybox ls", ["[timeout,stdbuf,ionice,setsid,busybox] ls"]),
        ("uv run --with requests pytest -q", ["[uv run] pytest -q"]),
        ("bundle exec rspec spec/x_spec.rb", ["[bundle exec] rspec spec/x_spec.rb"]),
        ("bash <<'EOF'\nls\nEOF", ["bash", "ls"]),
        ("/usr/bin/sudo /bin/rm -rf x", ["[sudo] /bin/rm -rf x"]),
        ("./sudo ls", ["./sudo ls"]),
        ("command -v git", ["command -v git"]),
        ("sudo -s", ["sudo -s"]),
        ("sudo -u www -- ls", ["[sudo] ls"]),
        ("sh script.sh arg", ["sh script.sh arg"]),
        ("sh -c", ["sh -c"]),
        ("bash -c \"$X\"", ["bash -c \"$X\""]),
        ("timeout 5", ["timeout 5"]),
        ("env", ["env"]),
        ("env FOO=1", ["env FOO=1"]),
        ("xargs -I{} sh -c 'echo {}'", ["[xargs] sh -c 'echo {}'", "echo '{}'"]),
        ("sudo env PATH=/x timeout 3 bash -c 'sudo rm -rf y'", ["[sudo,env,timeout] bash -c 'sudo rm -rf y'", "[sudo] rm -rf y"]),
    ])
    func wrappersArePeeled(_ source: String, _ expected: [String]) {
        #expect(Self.unwrapped(source) == expected, "\(source)")
    }

    @Test func peeledCommandsKeepWhatMatters() throws {
        let script = try #require(parsed("sudo -D /tmp env -C src FOO=1 xargs -n1 timeout 5 rm -f > log 2>&1"))
        let c = try #require(script.commands().first)
        #expect(c.name == "rm" && c.text == "rm -f")
        #expect(c.assignments.map(\.name) == ["FOO"])
        #expect(c.redirections.map(\.op) == [.output, .duplicateOutput])
        #expect(c.acceptsExtraArguments)
        #expect(c.workingDirectory?.staticValue == "src")
        #expect(c.ruleText == "sudo -D /tmp rm -f")
        #expect(c.source == "sudo -D /tmp env -C src FOO=1 xargs -n1 timeout 5 rm -f > log 2>&1")
        let loader = try #require(parsed("LD_PRELOAD=x.so PATH=/x NODE_ENV=test npm test")?.commands().first)
        #expect(loader.ruleText == "LD_PRELOAD=x.so PATH=/x npm test")
        #expect(ParsedCommand.isCodeLoadingVariable("DYLD_INSERT_LIBRARIES") && !ParsedCommand.isCodeLoadingVariable("CI"))
    }

    @Test func wrappersNestOnlySoDeep() {
        // More than 64 wrappers in a row: peeling stops and the command is opaque (risk unknown).
        let many = String(repeating: "timeout 1 ", count: 80) + "ls"
        #expect(parsed(many)?.commands().last?.wrappers.count == 64)
        #expect(Sandbox.shared.bash(many).risk == .unknown)
        #expect(Sandbox.shared.bash(String(repeating: "timeout 1 ", count: 60) + "ls").risk == .readOnly)
        // Quoting grows with every level, so nest a few levels and lower the limit.
        var nested = "rm -rf build"
        for _ in 0..<6 { nested = "sh -c " + ShellWord.quote(nested) }
        #expect(parsed(nested)?.commands().contains { $0.text == "rm -rf build" } == true)
        #expect(Sandbox.shared.bash(nested).risk == .destructive)
        guard case .success(let script) = ShellParser.parse(nested, maxDepth: 4) else { Issue.record("did not parse"); return }
        let shallow = script.commands(maxDepth: 4)
        #expect(!shallow.contains { $0.text == "rm -rf build" })  // beyond the limit the script stays opaque
        #expect(shallow.count < 6)
    }
}
