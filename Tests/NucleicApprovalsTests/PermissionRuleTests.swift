import NucleicApprovals
import NucleicProtocol
import Testing

@Suite struct PermissionRuleTests {
    @Test(arguments: [
        ("Bash", "Bash"), ("Bash(*)", "Bash"), (" Bash(ls) ", "Bash(ls)"), ("Bash(npm test)", "Bash(npm test)"),
        ("Bash(npm test *)", "Bash(npm test *)"), ("Bash(npm test:*)", "Bash(npm test:*)"), ("Bash(git * main)", "Bash(git * main)"),
        ("Edit(src/**)", "Edit(src/**)"), ("Read(~/.ssh/**)", "Read(~/.ssh/**)"), ("Read(//etc/**)", "Read(//etc/**)"),
        ("WebFetch(domain:Example.COM)", "WebFetch(domain:example.com)"), ("mcp__github", "mcp__github"),
        ("mcp__github__create_issue", "mcp__github__create_issue"), ("WebSearch", "WebSearch"), ("Write", "Write"), ("Glob", "Glob"),
        ("Task", "Task"), ("SomeFutureTool", "SomeFutureTool"), ("Bash(echo (a))", "Bash(echo (a))"),
    ])
    func parsesAndPrints(_ text: String, _ canonical: String) throws {
        #expect(try PermissionRule(parsing: text).description == canonical)
    }

    @Test(arguments: [
        ("Bash(npm test)", CommandPattern.Kind.exact, "npm test"), ("Bash(  \"npm\"   test )", .exact, "npm test"),
        ("Bash(npm test *)", .prefix, "npm test"), ("Bash(npm test:*)", .prefix, "npm test"), ("Bash(npm run test:*)", .prefix, "npm run test"),
        ("Bash(git commit -m \"x\" *)", .prefix, "git commit -m x"), ("Bash(ls*)", .wildcard, "ls*"), ("Bash(* install)", .wildcard, "* install"),
        ("Bash(git * main *)", .wildcard, "git * main *"), ("Bash(rm \\*.o)", .exact, "rm *.o"),
    ])
    func commandPatterns(_ text: String, _ kind: CommandPattern.Kind, _ literal: String) throws {
        guard case .command(let pattern)? = try PermissionRule(parsing: text).specifier else { Issue.record("no pattern"); return }
        #expect(pattern.kind == kind)
        #expect(pattern.literal == literal)
    }

    @Test(arguments: [
        ("", "cannot be empty"), ("Bash(", "does not end with ‘)’"), ("Bash)", "no ‘(’"), ("Bash()", "empty specifier"),
        ("bash(ls)", "case-sensitive: write Bash"), ("edit", "case-sensitive: write Edit"), ("Write(src/**)", "use Edit(…)"),
        ("MultiEdit(*.md)", "use Edit(…)"), ("Glob(*.ts)", "use Read(…)"), ("Grep(src/**)", "use Read(…)"),
        ("WebFetch(example.com)", "WebFetch(domain:example.com)"), ("WebFetch(domain:)", "needs a host name"),
        ("WebFetch(domain:https://x.com/a)", "needs a host name"), ("mcp__github__create_issue(x)", "MCP rules take no specifier"),
        ("mcp__", "names no MCP server"), ("Task(x)", "use the bare name Task"), ("WebSearch(swift)", "use the bare name WebSearch"),
        ("exec_command", "matched by Bash rules"), ("apply_patch(src/**)", "matched by Edit rules"), ("AskUserQuestion", "answered by a person"),
        ("request_user_input", "answered by a person"), ("Read(~bob/x)", "only your own home"), ("Bash(:*)", "empty prefix"),
        ("12(x)", "is not a tool name"), ("Ba sh", "is not a tool name"), ("Bash(npm test)x", "does not end with ‘)’"),
    ])
    func invalidRulesSayWhy(_ text: String, _ message: String) {
        do {
            let rule = try PermissionRule(parsing: text)
            Issue.record("\(text) parsed as \(rule)")
        } catch {
            #expect(error.message.contains(message), "\(text): \(error.message)")
        }
    }

    // MARK: Bash (Claude Code's documented matching)

    @Test(arguments: [
        ("Bash(npm test)", "npm test", true), ("Bash(npm test)", "npm test --watch", false), ("Bash(npm test)", "npm  test", true),
        ("Bash(npm test)", "\"npm\" test", true), ("Bash(npm test)", "npm tests", false),
        ("Bash(npm test *)", "npm test", true), ("Bash(npm test *)", "npm test --watch", true), ("Bash(npm test *)", "npm tests", false),
        ("Bash(npm test *)", "npm run test", false), ("Bash(npm test *)", "sudo npm test", false), ("Bash(npm test *)", "timeout 5 npm test", true),
        ("Bash(npm test *)", "nice -n 5 nohup npm test", true), ("Bash(npm test *)", "FOO=1 npm test", true), ("Bash(npm test *)", "PATH=/x npm test", false),
        ("Bash(npm test *)", "LD_PRELOAD=x.so npm test", false), ("Bash(npm test *)", "npm test 'a && b'", true), ("Bash(npm test *)", "setsid npm test", false),
        ("Bash(npm test:*)", "npm test", true), ("Bash(npm test:*)", "npm test -- -u", true), ("Bash(npm test:*)", "npm testx", false),
        ("Bash(npm run lint:*)", "npm run lint:fix", false), ("Bash(npm run lint:*)", "npm run lint -- --fix", true),
        ("Bash(ls*)", "ls", true), ("Bash(ls*)", "lsof", true), ("Bash(ls*)", "ls -la", true), ("Bash(ls *)", "ls", true), ("Bash(ls *)", "ls -la", true),
        ("Bash(ls *)", "lsof", false), ("Bash(git * main)", "git checkout main", true), ("Bash(git * main)", "git merge main", true),
        ("Bash(git * main)", "git checkout dev", false), ("Bash(git * main)", "git main", false), ("Bash(* install)", "npm install", true),
        ("Bash(* install)", "pip install", true), ("Bash(* install)", "npm install x", false), ("Bash(git commit -m *)", "git commit -m \"fix bug\"", true),
        ("Bash(git commit -m *)", "git commit --amend", false), ("Bash(rm \\*.o)", "rm *.o", true), ("Bash(rm \\*.o)", "rm x.o", false),
        ("Bash", "anything at all", true), ("Bash(*)", "rm -rf /", true), ("Bash(./scripts/run.sh *)", "./scripts/run.sh --fast", true),
        ("Bash(./scripts/run.sh *)", "scripts/run.sh", false), ("Bash(python x.py)", "python3 x.py", false),
    ])
    func bashRules(_ rule: String, _ command: String, _ allowed: Bool) throws {
        let c = Sandbox.shared.bash(command)
        let parsed = try PermissionRule(parsing: rule)
        let subject = try #require(RuleSubject.of(c).first(where: { $0.command?.name != nil }))
        #expect(parsed.allows(subject) == allowed, "\(rule) vs \(command) (\(subject.command?.ruleText ?? ""))")
    }

    @Test func rulesMatchWholeRequests() throws {
        let s = Sandbox.shared
        #expect(try PermissionRule(parsing: "Bash(npm *)").matches(s.bash("npm run build && npm test")))
        #expect(try !PermissionRule(parsing: "Bash(npm *)").matches(s.bash("npm test && make")))
        #expect(PermissionRule.exactCommand("npm test && make").matches(s.bash("npm test && make")))
        #expect(try PermissionRule(parsing: "Edit(src/**)").matches(s.tool("Edit", .edit, ["file_path": "src/a.swift"])))
        #expect(try !PermissionRule(parsing: "Edit(src/**)").matches(s.tool("Read", .read, ["file_path": "src/a.swift"])))
    }

    @Test func commandsGivenMoreArgumentsNeedAnOpenPattern() throws {
        let c = Sandbox.shared.bash("find . -name '*.o' | xargs rm")
        let rm = try #require(RuleSubject.of(c).last)
        #expect(rm.command?.acceptsExtraArguments == true)
        #expect(try PermissionRule(parsing: "Bash(rm *)").allows(rm))
        #expect(try !PermissionRule(parsing: "Bash(rm)").allows(rm))
        #expect(try PermissionRule(parsing: "Bash(rm)").denies(rm))
    }

    @Test func denyRulesMatchEverySpelling() throws {
        let s = Sandbox.shared
        let sudo = try #require(RuleSubject.of(s.bash("sudo -u root rm -rf /")).first)
        #expect(try PermissionRule(parsing: "Bash(rm *)").denies(sudo))
        #expect(try !PermissionRule(parsing: "Bash(rm *)").allows(sudo))
        let env = try #require(RuleSubject.of(s.bash("PATH=/x git push")).first)
        #expect(try PermissionRule(parsing: "Bash(git push *)").denies(env))
        let cat = try #require(RuleSubject.of(s.bash("cat .env")).first)
        #expect(try PermissionRule(parsing: "Read(.env)").denies(cat))
        #expect(try !PermissionRule(parsing: "Edit(.env)").denies(cat))
        let write = try #require(RuleSubject.of(s.bash("echo x > src/.env")).first)
        #expect(try PermissionRule(parsing: "Edit(.env)").denies(write))
    }

    // MARK: Files

    static let fileCases: [(String, String, String, Bool)] = [
        ("Edit(src/**)", "Edit", #"{"file_path":"@WT@/src/a.swift"}"#, true),
        ("Edit(src/**)", "Edit", #"{"file_path":"src/a.swift"}"#, true),
        ("Edit(src/**)", "Write", #"{"file_path":"@WT@/src/sub/deep/x.swift"}"#, true),
        ("Edit(src/**)", "MultiEdit", #"{"file_path":"@WT@/docs/guide.md"}"#, false),
        ("Edit(src/**)", "Edit", #"{"file_path":"@WT@/link-in/a.swift"}"#, true),
        ("Edit(src/**)", "Edit", #"{"file_path":"@WT@/src/up/other/file"}"#, false),
        ("Edit(src/**)", "Edit", #"{"file_path":"@WT@/src/../docs/x.md"}"#, false),
        ("Edit(src/**)", "apply_patch", #"{"changes":[{"path":"@WT@/src/a.swift"},{"path":"@WT@/src/b.swift"}]}"#, true),
        ("Edit(src/**)", "apply_patch", #"{"changes":[{"path":"@WT@/src/a.swift"},{"path":"@WT@/README.md"}]}"#, false),
        ("Edit(*.md)", "Edit", #"{"file_path":"@WT@/docs/guide.md"}"#, true),
        ("Edit(*.md)", "Edit", #"{"file_path":"@WT@/README.md"}"#, true),
        ("Edit(*.md)", "Edit", #"{"file_path":"@WT@/src/a.swift"}"#, false),
        ("Edit(*.md)", "Edit", #"{"file_path":"@ROOT@/work/other/x.md"}"#, false),
        ("Edit(/README.md)", "Edit", #"{"file_path":"@WT@/README.md"}"#, true),
        ("Edit(/README.md)", "Edit", #"{"file_path":"@WT@/docs/README.md"}"#, false),
        ("Edit(docs/)", "Edit", #"{"file_path":"@WT@/docs/guide.md"}"#, true),
        ("Edit(docs)", "Edit", #"{"file_path":"@WT@/docs/guide.md"}"#, true),
        ("Edit(docs)", "Edit", #"{"file_path":"@WT@/docs2/guide.md"}"#, false),
        ("Edit(./src/*.swift)", "Edit", #"{"file_path":"@WT@/src/a.swift"}"#, true),
        ("Edit(./src/*.swift)", "Edit", #"{"file_path":"@WT@/src/sub/a.swift"}"#, false),
        ("Edit(src/**/*.ts)", "Edit", #"{"file_path":"@WT@/src/x.ts"}"#, true),
        ("Edit(src/**/*.ts)", "Edit", #"{"file_path":"@WT@/src/a/b/x.ts"}"#, true),
        ("Edit(src/[ab].swift)", "Edit", #"{"file_path":"@WT@/src/a.swift"}"#, true),
        ("Edit(src/[!ab].swift)", "Edit", #"{"file_path":"@WT@/src/a.swift"}"#, false),
        ("Edit(src/?.swift)", "Edit", #"{"file_path":"@WT@/src/b.swift"}"#, true),
        ("Edit", "NotebookEdit", #"{"notebook_path":"@WT@/n.ipynb"}"#, true),
        ("Edit", "Bash", #"{"command":"touch x"}"#, false),
        ("Write", "Write", #"{"file_path":"@WT@/x"}"#, true),
        ("Write", "Edit", #"{"file_path":"@WT@/x"}"#, false),
        ("Read(.env)", "Read", #"{"file_path":"@WT@/.env"}"#, true),
        ("Read(.env)", "Read", #"{"file_path":"@WT@/src/.env"}"#, true),
        ("Read(./.env)", "Read", #"{"file_path":"@WT@/src/.env"}"#, true),
        ("Read(/.env)", "Read", #"{"file_path":"@WT@/src/.env"}"#, false),
        ("Read(~/.ssh/**)", "Read", #"{"file_path":"@HOME@/.ssh/id_rsa"}"#, true),
        ("Read(~/.ssh/**)", "Read", #"{"file_path":"@WT@/secret"}"#, true),
        ("Read(//usr/include/**)", "Read", #"{"file_path":"/usr/include/stdio.h"}"#, true),
        ("Read(//usr/include/**)", "Read", #"{"file_path":"@WT@/usr/include/stdio.h"}"#, false),
        ("Read(src/**)", "Grep", #"{"pattern":"x","path":"@WT@/src"}"#, true),
        ("Read(src/**)", "Grep", #"{"pattern":"x","path":"@WT@"}"#, false),
        // gitignore: `src/*` matches every entry of src, and a matching folder covers its contents.
        ("Read(src/*)", "Grep", #"{"pattern":"x","path":"@WT@/src"}"#, true),
        ("Read(src/*.swift)", "Grep", #"{"pattern":"x","path":"@WT@/src"}"#, false),
        ("Read(src/**)", "Glob", #"{"pattern":"src/**/*.swift"}"#, true),
        ("Read(src/**)", "LS", #"{"path":"@WT@/src"}"#, true),
        ("Read", "Glob", #"{"pattern":"**/*"}"#, true),
        ("Read", "Edit", #"{"file_path":"@WT@/x"}"#, false),
        ("WebFetch(domain:example.com)", "WebFetch", #"{"url":"https://example.com/x"}"#, true),
        ("WebFetch(domain:example.com)", "WebFetch", #"{"url":"https://api.example.com/x"}"#, false),
        ("WebFetch(domain:example.com)", "WebFetch", #"{"url":"https://example.com.evil.io/"}"#, false),
        ("WebFetch(domain:*.example.com)", "WebFetch", #"{"url":"https://api.example.com/x"}"#, true),
        ("WebFetch(domain:*.example.com)", "WebFetch", #"{"url":"https://example.com/"}"#, false),
        ("WebFetch", "WebFetch", #"{"url":"https://anything.org"}"#, true),
        ("mcp__github", "mcp__github__create_issue", #"{}"#, true),
        ("mcp__github", "mcp__gitlab__create_issue", #"{}"#, false),
        ("mcp__github__create_issue", "mcp__github__create_issue", #"{}"#, true),
        ("mcp__github__create_issue", "mcp__github__delete_repo", #"{}"#, false),
        ("mcp__github__*", "mcp__github__delete_repo", #"{}"#, true),
        ("Task", "Task", #"{}"#, true),
        ("Task", "TodoWrite", #"{}"#, false),
    ]

    @Test(arguments: fileCases)
    func toolRules(_ rule: String, _ tool: String, _ json: String, _ allowed: Bool) throws {
        let s = Sandbox.shared
        let c = s.tool(tool, ClaudeKinds.kind(tool), try JSONParser.parse(s.expand(json)))
        let parsed = try PermissionRule(parsing: rule)
        let subjects = RuleSubject.of(c)
        #expect(subjects.allSatisfy(parsed.allows) == allowed, "\(rule) vs \(tool) \(json): \(subjects.map(\.paths))")
    }

    @Test func exactRulesNameOneThing() throws {
        #expect(try PermissionRule(parsing: "Bash(ls -la)").namesExactly(tool: "Bash"))
        #expect(try !PermissionRule(parsing: "Bash(ls *)").namesExactly(tool: "Bash"))
        #expect(try !PermissionRule(parsing: "Bash").namesExactly(tool: "Bash"))
        #expect(try PermissionRule(parsing: "mcp__github__create_issue").namesExactly(tool: "mcp__github__create_issue"))
        #expect(try !PermissionRule(parsing: "mcp__github").namesExactly(tool: "mcp__github__create_issue"))
        #expect(try !PermissionRule(parsing: "mcp__github__*").namesExactly(tool: "mcp__github__create_issue"))
        #expect(try PermissionRule(parsing: "Task").namesExactly(tool: "Task"))
        #expect(try !PermissionRule(parsing: "Edit(src/**)").namesExactly(tool: "Edit"))
    }

    @Test(arguments: ["npm test && npm run lint", "rm *.o", "echo \\*", "printf 'a\\nb' | sort", "x=(1 2); echo ${x[*]}"])
    func exactCommandRulesRoundTrip(_ script: String) throws {
        let rule = PermissionRule.exactCommand(script)
        #expect(try PermissionRule(parsing: rule.description) == rule)
        #expect(rule.matchesWholeCommand(script, family: .shell))
        #expect(!rule.matchesWholeCommand(script + " x", family: .shell))
        #expect(!rule.matchesWholeCommand(script, family: .edit))
    }
}

/// Claude Code's tool kinds, for the tables.
enum ClaudeKinds {
    static func kind(_ tool: String) -> ToolKind {
        switch tool {
        case "Bash", "exec_command": .execute
        case "Read", "NotebookRead": .read
        case "Glob", "Grep", "LS": .search
        case "Edit", "Write", "MultiEdit", "NotebookEdit", "apply_patch": .edit
        case "WebFetch", "WebSearch": .fetch
        case "AskUserQuestion", "request_user_input": .question
        case "TodoWrite": .think
        default: .other
        }
    }
}
