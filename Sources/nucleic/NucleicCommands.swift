import NucleicCommandLine

/// The `nucleic` command table: every command's synopsis, description, options and examples.
/// `nucleic help`, `CMD --help`, the man page (docs/man/nucleic.1), the reference page
/// (docs/CLI.md) and the shell completions are all rendered from it (`scripts/cli-docs.sh`
/// regenerates the two files; a test fails when they are stale).
enum NucleicCommands {
    static let table = CommandTable(
        program: "nucleic", tagline: "a host for coding agents: sessions in worktrees, approvals, integration",
        overview: overview, commands: sessionCommands + deviceCommands + remoteCommands + toolCommands, exitCodes: CLI.exitCodes, topics: topics)

    /// The help of the command (or subcommand) `words` name, as `nucleic help WORDS` prints it.
    static func help(_ words: String...) -> String { help(words) ?? "" }

    static func help(_ words: [String]) -> String? {
        guard let (doc, depth) = table.resolve(words), depth == words.count else { return nil }
        return table.help(doc)
    }

    static let overview = """
        usage: nucleic <command> [options]

        Sessions (the daemon starts on demand):
          project add PATH [--name N]              register a git repository
          project ls | rm NAME                     list projects; unregister one that has no sessions
          start PROMPT [--project P] [--backend B] start an agent in a new worktree; prints its id
          ls [--all]                               sessions: NEEDS YOU, RUNNING, DONE
          watch                                    the live view: answer approvals with one key (`nucleic` alone too)
          show SESSION                             one session's summary
          log SESSION [--follow] [--since SEQ]     the readable transcript (--follow: answer approvals there)
          approvals                                pending approvals: diffs, commands, options; risk
          approve APPROVAL [--input F | --edit]    allow (optionally with a modified input)
                   [--always SCOPE]                ... and every later matching request
          deny APPROVAL [--message M] [--always]   deny; the agent continues with the message
          answer APPROVAL CHOICE...                answer a question: a number, a label or your own text
          rules ls|add|rm|explain                  the host's permission rules
          send SESSION TEXT                        a follow-up
          interrupt SESSION                        stop the current turn
          diff SESSION [--stat]                    the session's changes since it left its base
          discard SESSION [--delete-branch]        stop it, commit its work to its branch, remove the worktree
          integrate SESSION --merge|--rebase|--squash  bring the session's work onto its base
          overlap [PROJECT]                        files two live sessions both touched
          export-fixture SESSION                   the session's raw journal, replayable
          serve [--listen ADDR:PORT]               run the daemon in the foreground (--listen: for devices)
          stop-daemon [--kill-sessions]            stop the daemon; sessions keep running unless --kill-sessions
          config list|get|set|unset                settings that stick (config.toml), applied to a running daemon
          notify ls | test [CHANNEL]               notification channels, their last delivery; a test notification

        Devices (a phone over the LAN, end-to-end encrypted):
          pair [--scope S] [--label L]             a one-time QR code / nucleic:// link to pair a device
          devices [--all]                          paired devices
          revoke DEVICE                            unpair a device; its connections close at once

        Remote (this machine as a paired device of another host, over TCP):
          remote pair URI [--label L]              pair with a host from its pairing link
          remote ls | watch                        its sessions; live list, approvals, transcripts
          remote approve|deny APPROVAL, remote send SESSION TEXT

        Tools:
          demo [--fixture FILE] [--fast]           replay a recorded agent session, readably
          events --backend CODEC [FILE|-]          normalize an agent's stdout or a fixture to events (claude, codex, acp)
          replay-agent FIXTURE [--speed S]         play a recorded agent CLI on stdin/stdout (for testing hosts)
          doctor [--json]                          repairs made, damage, loose modes, stale shims and sockets
          completion bash|zsh|fish                 a shell completion script
          version                                  print versions of nucleic and its libraries
          help [COMMAND]                           show help

        A SESSION is its handle (12, as `ls` shows it), its branch, or the start or end of its id
        (4 characters or more); an APPROVAL is its handle (12.1) or 4 or more characters from the
        start or end of its id. Commands take --json
        (errors then are {"error":{"code","message"}} on stderr); `CMD --help` shows a command's
        options; `--` ends options. Short options: -a --all, -b --backend, -f --follow,
        -m --message, -n --name, -p --project, -s --stat, -t --title, -h --help.
        On a terminal, output is in colour (--color=auto|always|never; NO_COLOR turns it off) and
        log, diff, show and events go through a pager (NUCLEIC_PAGER, PAGER, else less -FRX;
        --no-pager or `nucleic config set pager off` turn it off).

        Exit status:
        \(CLI.exitCodes.map { "  \(String($0.status).padding(4)) \($0.code.padding(12)) \($0.meaning)" }.joined(separator: "\n"))
        """

    static let topics: [TopicDoc] = [
        TopicDoc("Arguments", """
            Options are parsed as git and gh parse them: --name value, --name=value, a boolean --flag,
            and the short forms -a --all, -b --backend, -f --follow, -m --message, -n --name,
            -p --project, -s --stat, -t --title, -h --help where the command has the long option. An
            option is never taken for a value: `--message -q` is refused (write --message=-q). A
            negative number is a value. An unknown option or command is refused with the nearest one
            ("did you mean --stat?") and the command's usage, exit status 64. `--` ends the options:
            every word after it is an argument. `CMD --help`, `CMD -h` and `nucleic help CMD` print a
            command's help and exit 0, on standard output.
            """),
        TopicDoc("Colour and pager", """
            Colour: --color=auto (the default: colour when standard output is a terminal and NO_COLOR
            is not set), --color=always (also through a pipe; NO_COLOR is then ignored), --color=never.
            A bare --color is --color=always, as in git. Coloured: the status groups and statuses of
            `ls` and `show`, risks, and diffs (`diff`, and the file changes on approval cards in `log`,
            `approvals` and `show`: added, removed, hunk lines).

            Pager: log, diff, show and events, when standard output is a terminal, go through
            NUCLEIC_PAGER, else the `pager` setting, else PAGER, else `less -FRX` (LESS=FRX is set when
            LESS is not). An empty value, `cat`, `off` or `false` means no pager; so do --no-pager
            (before or after the command) and `nucleic config set pager off`. `log --follow` is never
            paged. Quitting the pager early ends the command quietly, exit status 0.
            """),
        TopicDoc("Shell completion", """
            `nucleic completion bash|zsh|fish` prints a script that completes commands, subcommands,
            options, option values and, from a running daemon, session and approval handles and
            project names (it never starts a daemon). Install it with
              nucleic completion bash > ~/.local/share/bash-completion/completions/nucleic
              nucleic completion zsh > "${fpath[1]}/_nucleic"
              nucleic completion fish > ~/.config/fish/completions/nucleic.fish
            """),
        TopicDoc("Environment", """
              NUCLEIC_HOME       the data folder (default ~/.local/share/nucleic); config.toml is there too
                                 when it is set
              XDG_CONFIG_HOME    where config.toml and remote.json are otherwise (~/.config/nucleic)
              NUCLEIC_PAGER      the pager (then the pager setting, then PAGER)
              NO_COLOR           no colour unless --color=always
              EDITOR             what `approve --edit` and the watch view's e open
            Settings (`nucleic help config`) each have a variable too, e.g. NUCLEIC_CLAUDE_BIN.
            """),
        TopicDoc("See also", "git(1), docs/CLI.md, docs/CONFIG.md and docs/OPERATIONS.md in the Nucleic repository."),
    ]
}
