import NucleicCommandLine
import NucleicRuntime

extension NucleicCommands {
    static let deviceCommands: [CommandDoc] = [
        CommandDoc(["pair"], summary: "a one-time QR code / nucleic:// link to pair a device",
                   synopsis: ["pair [--scope view|approve|control] [--label L] [--advertise HOST:PORT]... [--json]"],
                   description: """
                       Asks the daemon for a pairing invite and shows it as a QR code and a nucleic://pair URI
                       for a phone to scan. The invite works once, for 5 minutes; a new one replaces it. The
                       daemon must listen for devices (`nucleic serve --listen ADDR:PORT`, or NUCLEIC_LISTEN
                       for the daemon started on demand). --scope is what the device may do (default
                       approve); --label names it (default: the name the device gives); --advertise is the
                       address the device should connect to (default: the daemon's listening address).
                       """,
                   options: [OptionDoc("scope", value: "S", "what the device may do: view, approve (the default) or control",
                                       kind: .choice(["view", "approve", "control"])),
                             OptionDoc("label", value: "L", "the device's name here"),
                             OptionDoc("advertise", value: "HOST:PORT", "the address the device connects to (repeatable)"), json],
                   examples: ["nucleic pair --scope control --label phone"]),
        CommandDoc(["devices"], summary: "paired devices", synopsis: ["devices [--all] [--json]"],
                   description: "Paired devices with their scope and open connections (--all: revoked ones too).",
                   options: [OptionDoc("all", short: "a", "revoked devices too"), json]),
        CommandDoc(["revoke"], summary: "unpair a device; its connections close at once", synopsis: ["revoke DEVICE [--json]"],
                   description: """
                       Revokes a paired device (an id or a unique prefix): its open connections close at
                       once and its next connection is refused as unauthorized. Pair it again to restore it.
                       """,
                   options: [json], arguments: [.device]),
    ]

    static let remoteCommands: [CommandDoc] = [
        CommandDoc(["remote"], summary: "this machine as a paired device of another host",
                   synopsis: ["remote pair URI [--label L] [--json]", "remote ls [--json]", "remote watch",
                              "remote approve APPROVAL [--confirm-risk] [--json]", "remote deny APPROVAL [--message M] [--json]",
                              "remote send SESSION TEXT [--json]"],
                   description: """
                       A remote client connects over TCP with Noise (IK, the host key pinned at pairing). Its key
                       and the paired host are in $XDG_CONFIG_HOME/nucleic/remote.json (~/.config/nucleic), 0600.
                       Approvals whose risk is unknown, network, hostExec or destructive need --confirm-risk (in
                       watch: `a! N`). An approval someone else answered first is reported, not an error.
                       Nothing is queued: an answer is sent only while connected, or it fails.
                       """,
                   options: [json],
                   subcommands: [
                       CommandDoc(["remote", "pair"], summary: "pair this machine with a host (its `nucleic pair` link)",
                                  synopsis: ["remote pair URI [--label L] [--json]"],
                                  options: [OptionDoc("label", value: "L", "this machine's name on the host"), json], arguments: [.text],
                                  examples: ["nucleic remote pair 'nucleic://pair?…'"]),
                       CommandDoc(["remote", "ls"], summary: "the host's sessions: NEEDS YOU, RUNNING, DONE", synopsis: ["remote ls [--json]"], options: [json]),
                       CommandDoc(["remote", "watch"], summary: "the live view of `nucleic watch`, of the host", synopsis: ["remote watch"],
                                  description: """
                                      On a terminal, the live view of `nucleic watch` (see `nucleic help watch`), with its
                                      keys (questions: the option's number). Elsewhere it prints lines (the list, approvals,
                                      transcripts) and reads commands: a N (allow approval N), a! N (allow a risky one),
                                      d N [message] (deny), s N TEXT (send to session N of the list), q (quit).
                                      """),
                       CommandDoc(["remote", "approve"], summary: "allow an approval on the host", synopsis: ["remote approve APPROVAL [--confirm-risk] [--json]"],
                                  options: [OptionDoc("confirm-risk", "needed for risk unknown, network, hostExec or destructive"), json], arguments: [.text]),
                       CommandDoc(["remote", "deny"], summary: "deny an approval on the host", synopsis: ["remote deny APPROVAL [--message M] [--json]"],
                                  options: [OptionDoc("message", short: "m", value: "M", "what the agent is told"), json], arguments: [.text]),
                       CommandDoc(["remote", "send"], summary: "a follow-up to a session of the host", synopsis: ["remote send SESSION TEXT [--json]"],
                                  options: [json], arguments: [.text, .text]),
                   ]),
    ]

    static let toolCommands: [CommandDoc] = [
        CommandDoc(["watch"], summary: "the live view: answer approvals with one key", synopsis: ["watch"],
                   description: WatchCommandLine.description),
        CommandDoc(["serve"], summary: "run the daemon in the foreground",
                   synopsis: ["serve [--max-running N] [--replay-speed recorded|max] [--approval-timeout SECS] [--listen ADDR:PORT]",
                              "      [--orphan-grace SECONDS] [--idle-timeout TIME]"],
                   description: """
                       Runs the Nucleic daemon in the foreground: it owns the sessions, their agents and the
                       store under $NUCLEIC_HOME (default ~/.local/share/nucleic), and listens on
                       $NUCLEIC_HOME/run/nucleic.sock. The other commands start it on demand, in the
                       background, logging to $NUCLEIC_HOME/run/daemon.log. SIGTERM or `nucleic stop-daemon`
                       stops it gracefully. Agents run under per-session shims and outlive the daemon: the
                       next daemon adopts them (`stop-daemon --kill-sessions` ends them instead).
                       """,
                   options: [OptionDoc("max-running", value: "N", "agents working at once; more sessions wait as queued (default 8)"),
                             OptionDoc("replay-speed", value: "SPEED", "how the replay backend plays fixtures: recorded (the default) or max",
                                       kind: .choice(["recorded", "max"])),
                             OptionDoc("approval-timeout", value: "SECS", "deny an approval no one answered in SECS seconds, telling the agent why (default: wait forever; NUCLEIC_APPROVAL_TIMEOUT too)"),
                             OptionDoc("listen", value: "ADDR:PORT", "also accept paired devices over TCP (Noise-encrypted) on this numeric address; off unless asked. The daemon started on demand takes it from NUCLEIC_LISTEN."),
                             OptionDoc("orphan-grace", value: "SECONDS", "end an agent whose daemon has been gone this long (default: never)"),
                             OptionDoc("idle-timeout", value: "TIME", "end an agent idle this long (its turn over, nothing pending); the next `nucleic send` resumes it: 600, 10m, 1h, or off (default 10m; NUCLEIC_IDLE_TIMEOUT too)")],
                   examples: ["nucleic serve --listen 192.168.1.20:7420"]),
        CommandDoc(["config"], summary: "settings that stick (config.toml), applied to a running daemon",
                   synopsis: ["config list [--json]", "config get KEY [--json]", "config set KEY VALUE [--json]", "config unset KEY [--json]"],
                   description: ConfigCommand.description, options: [json],
                   examples: ["nucleic config set claude-bin /opt/claude/bin/claude", "nucleic config set pager off", "nucleic config list"],
                   subcommands: [
                       CommandDoc(["config", "list"], summary: "each setting, its value and where it came from", synopsis: ["config list [--json]"],
                                  description: "Each setting, its value and where it came from (as the running daemon has it, when one runs).", options: [json]),
                       CommandDoc(["config", "get"], summary: "a setting's value", synopsis: ["config get KEY [--json]"],
                                  description: "Prints a setting's value; nothing and exit status 1 when it is not set (as git config does).",
                                  options: [json], arguments: [.configKey], examples: ["nucleic config get idle-timeout"]),
                       CommandDoc(["config", "set"], summary: "set a setting", synopsis: ["config set KEY VALUE [--json]"],
                                  description: "Sets a setting in the file and tells a running daemon, saying whether it applies now or at its next start.",
                                  options: [json], arguments: [.configKey, .text], examples: ["nucleic config set idle-timeout 30m"]),
                       CommandDoc(["config", "unset"], summary: "remove a setting from the file", synopsis: ["config unset KEY [--json]"],
                                  options: [json], arguments: [.configKey]),
                   ]),
        CommandDoc(["notify"], summary: "notification channels, their last delivery; a test notification",
                   synopsis: ["notify ls [--json]", "notify test [CHANNEL] [--json]"],
                   description: """
                       ls: each notification channel (desktop, ntfy, webhook, device:<id>), its rung on the
                       ladder, the categories it takes, and its last delivery with the result.
                       test: shows a test notification on CHANNEL, or on every channel, and prints what each
                       answered. Set channels up with `nucleic config set` (docs/OPERATIONS.md).
                       """,
                   options: [json],
                   subcommands: [
                       CommandDoc(["notify", "ls"], summary: "the channels and their last delivery", synopsis: ["notify ls [--json]"], options: [json]),
                       CommandDoc(["notify", "test"], summary: "a test notification", synopsis: ["notify test [CHANNEL] [--json]"],
                                  description: "Shows a test notification on CHANNEL, or on every channel, and prints what each answered.",
                                  options: [json], arguments: [.choice(["desktop", "ntfy", "webhook"])], examples: ["nucleic notify test desktop"]),
                   ]),
        CommandDoc(["demo"], summary: "replay a recorded agent session, readably", synopsis: ["demo [--fixture FILE] [--yes] [--fast] [--json] [--keep]"],
                   description: """
                       Creates a scratch git repository and a private Nucleic home in a temporary folder, starts a
                       session in its own worktree on the replay backend (a recorded Claude Code session, by
                       default Fixtures/claude/edit.jsonl: the agent asks to write notes.txt, then finishes; the
                       replayed agent makes the recorded file changes in the worktree), shows the events as they
                       come, stops at the approval to ask you, shows the session's diff, and integrates it onto
                       the scratch repository's main as one squash commit (shown as `git log -1 --stat` would).
                       Ctrl-C at any point ends the agent and removes the temporary folder.
                       """,
                   options: [OptionDoc("fixture", value: "FILE", "another recording (docs/FIXTURES.md)", kind: .file),
                             OptionDoc("yes", "answer the approval \"allow\" without asking"),
                             OptionDoc("fast", "play the recording at full speed instead of its recorded pace"),
                             OptionDoc("json", "print the normalized events as JSON lines instead"),
                             OptionDoc("keep", "keep the temporary folder (its path is printed) to look around")],
                   examples: ["nucleic demo", "nucleic demo --fast --yes"]),
        CommandDoc(["events"], summary: "normalize a raw agent stdout stream (or a fixture) to events", synopsis: ["events --backend claude|codex|acp [FILE|-]"],
                   description: """
                       Reads what an agent wrote to stdout (from FILE, or standard input when FILE is - or absent)
                       and prints the normalized events, one JSON object per line, numbered from seq 1
                       (docs/EVENTS.md). A fixture or raw journal (docs/FIXTURES.md) is read too: its agent lines
                       are decoded and its host lines followed, so recorded answers show as approvalResolved.
                       Malformed lines become `error` events; reading goes on.

                       Environment:
                         NUCLEIC_MAX_LINE_BYTES   the longest agent line decoded (default 64 MiB); longer lines
                                                  become `lineTooLong` errors
                       """,
                   options: [OptionDoc("backend", short: "b", value: "B", "the protocol the stream speaks: claude or codex (a fixture names its own)",
                                       kind: .choice(["claude", "codex"]))],
                   arguments: [.file], examples: ["nucleic events Fixtures/claude/two-tools.jsonl", "claude -p … --output-format stream-json | nucleic events -b claude"]),
        CommandDoc(["replay-agent"], summary: "play a recorded agent CLI on stdin/stdout (for testing hosts)", synopsis: ["replay-agent FIXTURE [--speed recorded|max]"],
                   description: """
                       Stands in for the agent CLI a fixture was recorded from (docs/FIXTURES.md): writes the
                       recorded agent lines to stdout (and its stderr lines to stderr) in order, and at each
                       recorded host line waits for the host to write one on stdin that means the same: the
                       same message type and subtype (Claude) or method (Codex), the same approval decision.
                       Request ids are mapped: the host picks its own, answers to the agent's carry the agent's.
                       When the recording ends it waits for stdin to close, as the real CLIs do, and exits 0.
                       The file changes the recorded agent reported (Write, Edit, MultiEdit; Codex file
                       changes) are made in the current folder before the line that reports them, so the
                       folder ends with the recorded run's diff; commands are not re-run.

                       Exit status:
                         0    the recording played to its end and the host closed stdin
                         3    the host wrote a line that does not mean the same as the recorded one, that is
                              not JSON, or that comes after the recording's end (stderr names the record)
                         4    the host closed stdin (or stdout) while the recording still expected a line
                         1    the fixture cannot be read
                       """,
                   options: [OptionDoc("speed", value: "SPEED", "recorded: pause between lines by the recorded gaps (the default); max: no pauses",
                                       kind: .choice(["recorded", "max"]))],
                   arguments: [.file], examples: ["nucleic replay-agent Fixtures/claude/edit.jsonl --speed max"]),
        CommandDoc(["doctor"], summary: "repairs made, damage, loose modes, stale shims and sockets", synopsis: ["doctor [--json]"],
                   description: DoctorCommand.description, options: [json]),
        CommandDoc(["completion"], summary: "a shell completion script", synopsis: ["completion bash|zsh|fish"],
                   description: """
                       Prints a script that completes nucleic's commands, options, option values and, from a
                       running daemon, session and approval handles and project names (it never starts a
                       daemon). Install it for your shell:
                         nucleic completion bash > ~/.local/share/bash-completion/completions/nucleic
                         nucleic completion zsh > "${fpath[1]}/_nucleic"
                         nucleic completion fish > ~/.config/fish/completions/nucleic.fish
                       """,
                   arguments: [.choice(["bash", "zsh", "fish"])], examples: ["source <(nucleic completion bash)"]),
        CommandDoc(["version"], summary: "print versions of nucleic and its libraries", synopsis: ["version [--json]"],
                   description: "Prints the versions of nucleic and its libraries.", options: [json]),
        CommandDoc(["help"], summary: "show help", synopsis: ["help [COMMAND [SUBCOMMAND]]"],
                   description: "Prints the overview, or a command's help (as `nucleic COMMAND --help` does).",
                   arguments: [.command], examples: ["nucleic help", "nucleic help integrate", "nucleic help project add"]),
    ]
}
