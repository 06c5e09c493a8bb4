extension SessionCommands {
    /// Each session command's help, as `nucleic CMD --help` prints it (and the golden help test
    /// checks it).
    static let usages: [String: String] = [
        "project": """
            usage: nucleic project add PATH [--name N]
                   nucleic project ls [--json]

            Registers a git repository as a project; its current branch becomes the base that
            sessions branch from.
            """,
        "start": """
            usage: nucleic start PROMPT [--project P] [--backend claude|codex|replay] [--fixture F]
                                 [--base BRANCH] [--title T] [--plan]

            Starts an agent on PROMPT in a new worktree and branch (nucleic/<title>-<id>) of the
            project, and prints the session id. The replay backend plays a recorded fixture.
            --plan starts Codex turns in its Plan mode (where it asks questions).
            """,
        "ls": "usage: nucleic ls [--all] [--json]\n\nSessions in attention order: NEEDS YOU, RUNNING, DONE (--all: with the archived).",
        "show": "usage: nucleic show SESSION [--json]\n\nOne session's summary (its worktree and branch, its diff stat) and pending approvals.",
        "log": """
            usage: nucleic log SESSION [--follow] [--since SEQ] [--json]

            The session's transcript, readable (--json: the events): each approval with its id and
            what it decides (a Write's content and an Edit's change as a diff, a command in full,
            a question's options, numbered). --follow keeps printing new events until interrupted;
            at a terminal it asks for each approval as it comes (y, n, a reason to deny, or for a
            question a number, a label or your own text; an empty line leaves it for later).
            --since starts after that seq.
            """,
        "approvals": """
            usage: nucleic approvals [--json]

            Pending approvals across sessions, oldest first: what each decides (a Write's content
            and an Edit's change as a diff, cut with a count when long; a command in full; a
            question's options, numbered), its risk
            (readOnly < write < execute < unknown < network < hostExec < destructive), what the
            backend can take (an edited input, answers), and the "allow always" scopes offered.
            """,
        "approve": """
            usage: nucleic approve APPROVAL [--input FILE | --edit | --answer LABEL] [--always SCOPE]

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
        "deny": """
            usage: nucleic deny APPROVAL [--message M] [--cancel] [--always | --rule RULE]

            Denies a pending approval; the agent continues and sees the message. --cancel also
            ends the agent's turn. --always denies this exact command (or tool) for the rest of
            the session; --rule RULE denies everything RULE matches in the project, e.g.
            --rule 'Bash(git push *)'. Later matching requests are denied with the same message.
            """,
        "answer": """
            usage: nucleic answer APPROVAL CHOICE...

            Answers an agent's question: CHOICE is an option's number (as `nucleic approvals`
            shows them), its label in any case, or your own text where the agent takes one
            (Claude Code always does). A multiple-choice question takes several (or "1,3"). When
            it asks several questions, give "QUESTION=CHOICE" for each (QUESTION: its text or
            number).
            """,
        "rules": """
            usage: nucleic rules ls [--project P] [--json]
                   nucleic rules add RULE [--deny] [--message M] [--project P | --session S]
                   nucleic rules rm RULE_ID
                   nucleic rules explain TOOL INPUT_JSON [--project P | --session S] [--json]

            The host's permission rules, in Claude Code's syntax: Bash(npm test *), Edit(src/**),
            Read, WebFetch(domain:example.com), mcp__server__tool. A matching request is answered
            at once and recorded as decided by rule:<id>; deny beats allow; a compound command is
            allowed only when every part is; risk network, hostExec and destructive always ask.
            `explain` shows the risk, the matching rules and the outcome (allowedByRule,
            deniedByRule, asks) of a tool call without running anything, e.g.
              nucleic rules explain Bash '{"command":"npm test && git push -f"}'
            """,
        "send": "usage: nucleic send SESSION TEXT\n\nSends a follow-up (resuming the agent if it is no longer running).",
        "interrupt": "usage: nucleic interrupt SESSION\n\nStops the session's current turn.",
        "diff": """
            usage: nucleic diff SESSION [--stat] [--json]

            The session's own changes: from the point its branch left the base (as `git diff
            base...branch`), uncommitted and untracked files included. What the base gained since
            (another session's integration) is not shown.
            """,
        "discard": """
            usage: nucleic discard SESSION [--delete-branch [--force]]

            Stops the agent, commits the worktree's uncommitted work onto the session branch (as
            you, from git's user.name and user.email, with the agent as co-author; the commit id
            is printed), and removes the worktree. The branch is kept unless --delete-branch,
            which refuses when the branch holds work that is not on the base, unless --force.
            The transcript is always kept.
            """,
        "integrate": """
            usage: nucleic integrate SESSION --merge | --rebase | --squash [--message M] [--no-ff] [--keep] [--interrupt]
                   nucleic integrate SESSION --resolve-with-agent

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
        "overlap": "usage: nucleic overlap [PROJECT] [--json]\n\nFiles that two or more live sessions have both touched, before they conflict.",
        "export-fixture": "usage: nucleic export-fixture SESSION\n\nPrints the session's raw journal: a fixture `nucleic replay-agent` can play.",
        "stop-daemon": """
            usage: nucleic stop-daemon [--kill-sessions]

            Stops the daemon gracefully. Sessions keep running under their shims, and the next
            daemon (started by any command) adopts them: upgrading is stop-daemon, replace the
            binary, start. --kill-sessions ends every agent too (starting a daemon first if none
            runs, so the shims a killed daemon left are ended as well).
            """,
    ]
}
