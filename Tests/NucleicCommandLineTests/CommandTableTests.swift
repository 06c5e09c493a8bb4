import NucleicCommandLine
import Testing

/// The command table's renderings, on a small table: help, completion, man page, Markdown.
@Suite struct CommandTableTests {
    static let table = CommandTable(
        program: "tool", tagline: "a tool", overview: "usage: tool <command>\n\nIt does things.",
        commands: [
            CommandDoc(["show"], summary: "one session", synopsis: ["show SESSION [--json]", "     [--all]"],
                       options: [OptionDoc("all", short: "a", "every one"), .json], arguments: [.session], examples: ["tool show 12"]),
            CommandDoc(["project"], summary: "projects", synopsis: ["project add PATH", "project rm NAME"], description: "Projects.\n\n  add   adds\n  rm    removes",
                       subcommands: [
                           CommandDoc(["project", "add"], summary: "add one", synopsis: ["project add PATH"], options: [OptionDoc("name", value: "N", "its name")],
                                      arguments: [.file]),
                           CommandDoc(["project", "rm"], summary: "remove one", synopsis: ["project rm NAME"], arguments: [.project]),
                       ]),
            CommandDoc(["start"], summary: "start one", synopsis: ["start PROMPT"],
                       options: [OptionDoc("backend", short: "b", value: "B", "the backend", kind: .choice(["claude", "codex"])),
                                 OptionDoc("project", short: "p", value: "P", "the project", kind: .project)],
                       arguments: [.text]),
        ],
        exitCodes: [(0, "ok", "done"), (64, "usage", "wrong")], topics: [TopicDoc("Environment", ".dot starts a line\nand a \\ backslash")])

    @Test func helpHasUsageDescriptionOptionsAndExamples() {
        #expect(Self.table.help(Self.table.command("show")!) == """
            usage: tool show SESSION [--json]
                             [--all]

            One session.

            Options:
              -a, --all               every one
              --json                  print JSON instead (errors: {"error":{"code","message"}} on stderr)
              -h, --help              show this help

            Examples:
              tool show 12
            """)
        let project = Self.table.help(Self.table.command("project")!)
        #expect(project.contains("Commands:\n  add   add one\n  rm    remove one\n\nRun `tool help project COMMAND` for a command's options."))
        #expect(Self.table.resolve(["project", "rm", "x"])?.doc.name == "project rm")
        #expect(Self.table.resolve(["project", "x"])?.depth == 1)
        #expect(Self.table.resolve(["nope"]) == nil)
        #expect(Self.table.allCommands.map(\.name) == ["show", "project", "project add", "project rm", "start"])
    }

    @Test(arguments: [
        ([""], ["show", "project", "start"]),
        (["s"], ["show", "start"]),
        (["show", ""], ["12", "13"]),
        (["show", "1", ""], []),
        (["show", "--"], ["--all", "--json", "--color", "--no-pager", "--help"]),
        (["show", "--a"], ["--all"]),
        (["project", ""], ["add", "rm"]),
        (["project", "rm", ""], ["shop", "shed"]),
        (["project", "rm", "sho"], ["shop"]),
        (["project", "add", ""], []),
        (["start", "-b", ""], ["claude", "codex"]),
        (["start", "--backend", "cl"], ["claude"]),
        (["start", "--backend=co"], ["--backend=codex"]),
        (["start", "-p", "s"], ["shop", "shed"]),
        (["start", "--color="], ["--color=auto", "--color=always", "--color=never"]),
        (["--no-pager", "show", ""], ["12", "13"]),
        (["nope", ""], []),
    ])
    func completionComesFromTheTable(_ words: [String], _ expected: [String]) {
        let got = Self.table.completions(words) { kind in
            switch kind {
            case .session: ["12", "13"]
            case .project: ["shop", "shed"]
            default: []
            }
        }
        #expect(got == expected)
    }

    @Test func theManPageEscapesRoff() {
        let page = Self.table.manPage(version: "tool 1.0")
        #expect(page.hasPrefix(".\\\" -*- coding: UTF-8 -*-\n"))
        #expect(page.contains(".TH TOOL 1 \"\" \"tool 1.0\" \"User Commands\""))
        #expect(page.contains(".SS \"tool project add\""))
        #expect(page.contains("\\fB\\-a, \\-\\-all\\fR"))
        #expect(page.contains("\\&.dot starts a line\nand a \\e backslash"))
        #expect(page.contains(".nf\n  add   adds\n  rm    removes\n.fi"))
        #expect(!page.contains("usage: tool <command>"), "the overview's usage line is the SYNOPSIS")
    }

    @Test func theReferenceLinksEveryCommand() {
        let markdown = Self.table.markdown()
        #expect(markdown.contains("- [`tool project add`](#tool-project-add): add one"))
        #expect(markdown.contains("### tool show\n\n```text\ntool show SESSION [--json]\n          [--all]\n```"))
        #expect(markdown.contains("| `-a, --all` | every one |"))
        #expect(markdown.contains("| 64 | `usage` | wrong |"))
        #expect(markdown.contains("```text\n  add   adds\n  rm    removes\n```"))
    }

    @Test func shellScriptsExistForThreeShells() {
        for shell in ["bash", "zsh", "fish"] { #expect(Self.table.completionScript(shell)?.contains("tool __complete") == true) }
        #expect(Self.table.completionScript("tcsh") == nil)
    }
}
