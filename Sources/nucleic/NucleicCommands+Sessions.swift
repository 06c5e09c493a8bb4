import NucleicCommandLine

extension NucleicCommands {
    static let json = OptionDoc.json
    static let project = OptionDoc("project", short: "p", value: "P", "the project (default: the one of the current folder)", kind: .project)
    static let session = OptionDoc("session", value: "S", "the session", kind: .session)
    static let backends = ["claude", "codex", "acp", "replay", "kimi", "gemini"]

    static let sessionCommands: [CommandDoc] = [
        CommandDoc(["project"], summary: "register, list and unregister git repositories",
                   synopsis: ["project add PATH [--name N] [--json]", "project ls [--json]", "project rm NAME [--json]"],
                   description: """
                       Registers a git repository as a project; its current branch becomes the base that
                       sessions branch from. A repository is one project: adding it again is refused, naming
                       the project it is. `rm` unregisters a project that has no sessions (the repository
                       itself is untouched). Inside a project's repository or any of its worktrees, `start`
                       and `overlap` take that project without --project.
                       """,
                   options: [json],
                   examples: ["nucleic project add ~/src/shop --name shop", "nucleic project ls"],
                   subcommands: [
                       CommandDoc(["project", "add"], summary: "register a git repository", synopsis: ["project add PATH [--name N] [--json]"],
                                  description: """
                                      Registers the git repository at PATH as a project; its current branch becomes the
                                      base sessions branch from. The name defaults to the folder's. Adding a repository
                                      that is already a project is refused, naming that project.
                                      """,
                                  options: [OptionDoc("name", short: "n", value: "N", "the project's name (default: the folder's name)"), json],
                                  arguments: [.file], examples: ["nucleic project add . -n shop"]),
                       CommandDoc(["project", "ls"], summary: "list the projects", synopsis: ["project ls [--json]"],
                                  description: "Lists the registered projects: name, repository and base branch.", options: [json]),
                       CommandDoc(["project", "rm"], summary: "unregister a project that has no sessions", synopsis: ["project rm NAME [--json]"],
                                  description: "Unregisters the project NAME. Refused while it has sessions; the repository itself is untouched.",
                                  options: [json], arguments: [.project], examples: ["nucleic project rm shop"]),
                   ]),
        CommandDoc(["start"], summary: "start an agent in a new worktree; prints its id",
                   synopsis: ["start PROMPT [--project P] [--backend B] [--fixture F] [--agent-command CMD]",
                              "      [--base BRANCH] [--title T] [--plan] [--json]"],
                   description: """
                       Starts an agent on PROMPT in a new worktree and branch (nucleic/<title>-<id>) of the
                       project, and prints the session id. Backends: claude, codex, the Agent Client Protocol
                       agents of Adapters/ (kimi, gemini, …), acp (any ACP agent: --agent-command "CMD ARGS"
                       or the acp-command setting), replay (plays a recorded fixture). --agent-command also
                       replaces another backend's program and arguments. --plan starts Codex turns in its
                       Plan mode (where it asks questions). An empty PROMPT is refused.
                       """,
                   options: [project,
                             OptionDoc("backend", short: "b", value: "B", "claude (the default), codex, acp, replay or an adapter of Adapters/", kind: .choice(backends)),
                             OptionDoc("fixture", value: "F", "the recording --backend replay plays", kind: .file),
                             OptionDoc("agent-command", value: "CMD", "the agent's program and arguments instead of the backend's"),
                             OptionDoc("base", value: "BRANCH", "branch from BRANCH instead of the project's base"),
                             OptionDoc("title", short: "t", value: "T", "the session's title (default: from the prompt)"),
                             OptionDoc("plan", "Codex: start turns in Plan mode"), json],
                   arguments: [.text],
                   examples: ["nucleic start \"fix the flaky checkout test\" -p shop",
                              "nucleic start \"add a --verbose flag\" -b codex -t verbose-flag",
                              "nucleic start \"try it\" -b replay --fixture Fixtures/claude/edit.jsonl"]),
        CommandDoc(["ls"], summary: "sessions: NEEDS YOU, RUNNING, DONE", synopsis: ["ls [--all] [--json]"],
                   description: "Sessions in attention order: NEEDS YOU, RUNNING, DONE (--all: with the archived).",
                   options: [OptionDoc("all", short: "a", "the archived sessions too"), json], examples: ["nucleic ls", "nucleic ls --json | jq '.[].handle'"]),
        CommandDoc(["show"], summary: "one session's summary", synopsis: ["show SESSION [--json]"],
                   description: "One session's summary (its worktree and branch, its diff stat) and pending approvals.",
                   options: [json], arguments: [.session], examples: ["nucleic show 12", "nucleic show nucleic/fix-test-01a2"]),
        CommandDoc(["log"], summary: "the readable transcript", synopsis: ["log SESSION [--follow] [--since SEQ] [--json]"],
                   description: """
                       The session's transcript, readable (--json: the events): each approval with its id and
                       what it decides (a Write's content and an Edit's change as a diff, a command in full,
                       a question's options, numbered). --follow keeps printing new events until interrupted;
                       at a terminal it asks for each approval as it comes (y, n, a reason to deny, or for a
                       question a number, a label or your own text; an empty line leaves it for later).
                       --since starts after that seq.
                       """,
                   options: [OptionDoc("follow", short: "f", "keep printing new events; answer approvals at the terminal"),
                             OptionDoc("since", value: "SEQ", "start after event SEQ"), json],
                   arguments: [.session], examples: ["nucleic log 12", "nucleic log 12 -f", "nucleic log 12 --since 40 --json"]),
        CommandDoc(["approvals"], summary: "pending approvals: diffs, commands, options; risk", synopsis: ["approvals [--json]"],
                   description: """
                       Pending approvals across sessions, oldest first: what each decides (a Write's content
                       and an Edit's change as a diff, cut with a count when long; a command in full; a
                       question's options, numbered), its risk
                       (readOnly < write < execute < unknown < network < hostExec < destructive), what the
                       backend can take (an edited input, answers), and the "allow always" scopes offered.
                       """,
                   options: [json], examples: ["nucleic approvals"]),
        CommandDoc(["approve"], summary: "allow a pending approval",
                   synopsis: ["approve APPROVAL [--input FILE | --edit | --answer LABEL] [--always SCOPE] [--json]"],
                   description: """
                       Allows a pending approval. --input FILE allows it with the JSON input in FILE instead;
                       --edit opens the input in $EDITOR first. Backends that cannot take a modified input
                       (Codex) refuse; deny with a message instead. A question is answered with --answer
                       LABEL (one of its options; for several questions, --answer "QUESTION=LABEL" each).
                       --always SCOPE also allows every later matching request, answered by a host rule:
                         command          this exact command, for the rest of this session
                         tool             this tool, for the rest of this session
                         'Bash(npm test *)'  a project rule in Claude Code's permission-rule syntax
                       Never for risk network, hostExec or destructive: those always ask.
                       """,
                   options: [OptionDoc("input", value: "FILE", "allow with the JSON input in FILE", kind: .file),
                             OptionDoc("edit", "edit the input in $EDITOR, then allow it"),
                             OptionDoc("answer", value: "LABEL", "answer a question with one of its options (repeatable)"),
                             OptionDoc("always", value: "SCOPE", "also allow later matching requests: command, tool or a rule", kind: .choice(["command", "tool"])),
                             json],
                   arguments: [.approval], examples: ["nucleic approve 12.1", "nucleic approve 12.2 --always command", "nucleic approve 3.1 --edit"]),
        CommandDoc(["deny"], summary: "deny; the agent continues with the message",
                   synopsis: ["deny APPROVAL [--message M] [--cancel] [--always | --rule RULE] [--json]"],
                   description: """
                       Denies a pending approval; the agent continues and sees the message. --cancel also
                       ends the agent's turn. --always denies this exact command (or tool) for the rest of
                       the session; --rule RULE denies everything RULE matches in the project, e.g.
                       --rule 'Bash(git push *)'. Later matching requests are denied with the same message.
                       """,
                   options: [OptionDoc("message", short: "m", value: "M", "what the agent is told"),
                             OptionDoc("cancel", "also end the agent's turn"),
                             OptionDoc("always", "deny this command (or tool) for the rest of the session"),
                             OptionDoc("rule", value: "RULE", "deny everything RULE matches in the project"), json],
                   arguments: [.approval], examples: ["nucleic deny 12.1 -m \"use the test database\"", "nucleic deny 12.3 --rule 'Bash(git push *)'"]),
        CommandDoc(["answer"], summary: "answer a question: a number, a label or your own text", synopsis: ["answer APPROVAL CHOICE... [--json]"],
                   description: """
                       Answers an agent's question: CHOICE is an option's number (as `nucleic approvals`
                       shows them), its label in any case, or your own text where the agent takes one
                       (Claude Code always does). A multiple-choice question takes several (or "1,3"). When
                       it asks several questions, give "QUESTION=CHOICE" for each (QUESTION: its text or
                       number).
                       """,
                   options: [json], arguments: [.approval, .text], examples: ["nucleic answer 12.4 2", "nucleic answer 12.4 \"1,3\""]),
        CommandDoc(["rules"], summary: "the host's permission rules",
                   synopsis: ["rules ls [--project P] [--json]",
                              "rules add RULE [--deny] [--message M] [--project P | --session S] [--json]",
                              "rules rm RULE_ID [--json]",
                              "rules explain TOOL INPUT_JSON [--project P | --session S] [--json]"],
                   description: """
                       The host's permission rules, in Claude Code's syntax: Bash(npm test *), Edit(src/**),
                       Read, WebFetch(domain:example.com), mcp__server__tool. A matching request is answered
                       at once and recorded as decided by rule:<id>; deny beats allow; a compound command is
                       allowed only when every part is; risk network, hostExec and destructive always ask.
                       `explain` shows the risk, the matching rules and the outcome (allowedByRule,
                       deniedByRule, asks) of a tool call without running anything, e.g.
                         nucleic rules explain Bash '{"command":"npm test && git push -f"}'
                       """,
                   options: [json],
                   subcommands: [
                       CommandDoc(["rules", "ls"], summary: "list the rules", synopsis: ["rules ls [--project P] [--json]"],
                                  description: "Lists the host's rules, or those of one project.", options: [project, json]),
                       CommandDoc(["rules", "add"], summary: "add an allow (or deny) rule",
                                  synopsis: ["rules add RULE [--deny] [--message M] [--project P | --session S] [--json]"],
                                  description: """
                                      Adds a rule in Claude Code's syntax (Bash(npm test *), Edit(src/**), Read, …) for a
                                      project or one session; it allows matching requests unless --deny.
                                      """,
                                  options: [OptionDoc("deny", "deny what it matches instead"),
                                            OptionDoc("message", short: "m", value: "M", "what a denied agent is told"), project, session, json],
                                  arguments: [.text], examples: ["nucleic rules add 'Bash(npm test *)' -p shop", "nucleic rules add 'Bash(git push *)' --deny -m \"no pushing\""]),
                       CommandDoc(["rules", "rm"], summary: "remove a rule", synopsis: ["rules rm RULE_ID [--json]"],
                                  description: "Removes the rule RULE_ID (as `rules ls` shows it).", options: [json], arguments: [.text]),
                       CommandDoc(["rules", "explain"], summary: "what the rules make of a tool call",
                                  synopsis: ["rules explain TOOL INPUT_JSON [--project P | --session S] [--json]"],
                                  description: "Shows the risk, the matching rules and the outcome (allowedByRule, deniedByRule, asks) of a tool call without running anything.",
                                  options: [project, session, json], arguments: [.text, .text],
                                  examples: ["nucleic rules explain Bash '{\"command\":\"npm test && git push -f\"}'"]),
                   ]),
        CommandDoc(["send"], summary: "a follow-up", synopsis: ["send SESSION TEXT [--json]"],
                   description: "Sends a follow-up (resuming the agent if it is no longer running). An empty TEXT is refused.",
                   options: [json], arguments: [.session, .text], examples: ["nucleic send 12 \"now run the tests\""]),
        CommandDoc(["interrupt"], summary: "stop the current turn", synopsis: ["interrupt SESSION [--json]"],
                   description: "Stops the session's current turn.", options: [json], arguments: [.session], examples: ["nucleic interrupt 12"]),
        CommandDoc(["diff"], summary: "the session's changes since it left its base", synopsis: ["diff SESSION [--stat] [--json]"],
                   description: """
                       The session's own changes: from the point its branch left the base (as `git diff
                       base...branch`), uncommitted and untracked files included. What the base gained since
                       (another session's integration) is not shown.
                       """,
                   options: [OptionDoc("stat", short: "s", "files and their line counts only"), json], arguments: [.session],
                   examples: ["nucleic diff 12", "nucleic diff 12 -s"]),
        CommandDoc(["discard"], summary: "stop it, commit its work to its branch, remove the worktree",
                   synopsis: ["discard SESSION [--delete-branch [--force]] [--json]"],
                   description: """
                       Stops the agent, commits the worktree's uncommitted work onto the session branch (as
                       you, from git's user.name and user.email, with the agent as co-author; the commit id
                       is printed), and removes the worktree. The branch is kept unless --delete-branch,
                       which refuses when the branch holds work that is not on the base, unless --force.
                       The transcript is always kept.
                       """,
                   options: [OptionDoc("delete-branch", "delete the session's branch too"),
                             OptionDoc("force", "with --delete-branch: even when it holds work not on the base"), json],
                   arguments: [.session], examples: ["nucleic discard 12", "nucleic discard 12 --delete-branch"]),
        CommandDoc(["integrate"], summary: "bring the session's work onto its base",
                   synopsis: ["integrate SESSION --merge | --rebase | --squash [--message M] [--no-ff] [--keep] [--interrupt] [--json]",
                              "integrate SESSION --resolve-with-agent [--json]"],
                   description: """
                       Brings the session's work onto its base branch: its uncommitted and untracked files are
                       first committed to the session branch, then
                         --merge    fast-forward when possible (--no-ff: always a merge commit)
                         --rebase   the session's commits replayed onto the base tip
                         --squash   one commit: the title, the prompt and the files changed (or --message M)
                       Conflicts change nothing anywhere: the conflicted paths are listed, the session becomes
                       `conflicted`, and the exit status is 3 (4: uncommitted work in your checkout of the base
                       at paths the integration changes). --resolve-with-agent asks the agent to bring its
                       branch up to date and resolve them; integrate again afterwards. Afterwards the worktree
                       is removed and the branch deleted unless --keep; the transcript stays.

                       Every commit is yours (git's user.name and user.email; refused when they are not set),
                       with the session's title as subject, the agent as a Co-authored-by trailer and a
                       Nucleic-Session trailer.
                       """,
                   options: [OptionDoc("merge", "merge (fast-forward when possible)"), OptionDoc("rebase", "replay its commits onto the base"),
                             OptionDoc("squash", "one commit"), OptionDoc("message", short: "m", value: "M", "the squash commit's message"),
                             OptionDoc("no-ff", "with --merge: always a merge commit"), OptionDoc("keep", "keep the worktree and the branch"),
                             OptionDoc("interrupt", "interrupt a running turn first"),
                             OptionDoc("resolve-with-agent", "ask the agent to resolve the conflicts"), json],
                   arguments: [.session], examples: ["nucleic integrate 12 --squash", "nucleic integrate 12 --rebase --keep", "nucleic integrate 12 --resolve-with-agent"]),
        CommandDoc(["overlap"], summary: "files two live sessions both touched", synopsis: ["overlap [PROJECT] [--json]"],
                   description: "Files that two or more live sessions have both touched, before they conflict. PROJECT defaults to the current folder's.",
                   options: [json], arguments: [.project], examples: ["nucleic overlap", "nucleic overlap shop"]),
        CommandDoc(["export-fixture"], summary: "the session's raw journal, replayable", synopsis: ["export-fixture SESSION [--json]"],
                   description: "Prints the session's raw journal: a fixture `nucleic replay-agent` can play (--json: {sessionID, handle, text}).",
                   options: [json], arguments: [.session], examples: ["nucleic export-fixture 12 > fix-test.jsonl"]),
        CommandDoc(["stop-daemon"], summary: "stop the daemon", synopsis: ["stop-daemon [--kill-sessions] [--json]"],
                   description: """
                       Stops the daemon gracefully. Sessions keep running under their shims, and the next
                       daemon (started by any command) adopts them: upgrading is stop-daemon, replace the
                       binary, start. --kill-sessions ends every agent too (starting a daemon first if none
                       runs, so the shims a killed daemon left are ended as well).
                       """,
                   options: [OptionDoc("kill-sessions", "end every agent too"), json], examples: ["nucleic stop-daemon"]),
    ]
}
