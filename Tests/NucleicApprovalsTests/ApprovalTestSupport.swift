import Foundation
import NucleicApprovals
import NucleicProtocol

/// A real folder tree in a temp folder, made once per test process:
///
/// ```
/// <root>/home/             the user's home: .ssh/id_rsa, .bashrc
/// <root>/work/tree/        the session's worktree
///     src/a.swift src/b.swift src/up -> ../..  (a link leaving the worktree)
///     docs/guide.md README.md .env Makefile build/ scripts/run.sh node_modules/.bin/jest
///     link-in -> src       secret -> <home>/.ssh/id_rsa     link-out -> <home>/.ssh
///     loop1 -> loop2 -> loop1
/// <root>/work/tree-other/x (a sibling whose name starts like the worktree's)
/// <root>/work/other/file
/// <root>/alias -> work/tree (the worktree reached through a link)
/// ```
struct Sandbox: Sendable {
    let root: String
    let home: String
    let worktree: String

    static let shared: Sandbox = {
        let fm = FileManager.default
        let root = fm.temporaryDirectory.appendingPathComponent("nucleic-approvals-\(getpid())").path
        let resolvedRoot = (try? fm.destinationOfSymbolicLink(atPath: root)) ?? root
        let home = resolvedRoot + "/home", tree = resolvedRoot + "/work/tree"
        func dir(_ p: String) { try? fm.createDirectory(atPath: p, withIntermediateDirectories: true) }
        func file(_ p: String, _ text: String = "x\n") { _ = fm.createFile(atPath: p, contents: Data(text.utf8)) }
        func link(_ p: String, _ target: String) { try? fm.createSymbolicLink(atPath: p, withDestinationPath: target) }
        for d in ["/home/.ssh", "/work/tree/src", "/work/tree/docs", "/work/tree/build", "/work/tree/scripts", "/work/tree/node_modules/.bin",
                  "/work/tree/.claude", "/work/tree-other", "/work/other"] { dir(resolvedRoot + d) }
        file(home + "/.ssh/id_rsa", "PRIVATE KEY\n")
        file(home + "/.bashrc")
        for f in ["src/a.swift", "src/b.swift", "docs/guide.md", "README.md", ".env", "Makefile", "scripts/run.sh", "node_modules/.bin/jest",
                  "build/out.o", "build/log.txt", "package.json"] { file(tree + "/" + f) }
        file(resolvedRoot + "/work/tree-other/x")
        file(resolvedRoot + "/work/other/file")
        link(tree + "/link-in", "src")
        link(tree + "/secret", home + "/.ssh/id_rsa")
        link(tree + "/link-out", home + "/.ssh")
        link(tree + "/loop1", "loop2")
        link(tree + "/loop2", "loop1")
        link(tree + "/src/up", "../..")
        link(resolvedRoot + "/alias", "work/tree")
        return Sandbox(root: resolvedRoot, home: home, worktree: tree)
    }()

    var fileSystem: LocalFileSystem { LocalFileSystem(homeDirectory: home) }
    var classifier: RiskClassifier { RiskClassifier(fileSystem: fileSystem) }

    /// `@WT@`, `@HOME@` and `@ROOT@` in a test's text replaced with this sandbox's paths.
    func expand(_ text: String) -> String {
        text.replacingOccurrences(of: "@WT@", with: worktree).replacingOccurrences(of: "@HOME@", with: home)
            .replacingOccurrences(of: "@ROOT@", with: root)
    }

    func bash(_ command: String, cwd: String? = nil) -> Classification {
        var input: JSONObject = ["command": .string(expand(command))]
        if let cwd { input["cwd"] = .string(expand(cwd)) }
        return classifier.classify(toolName: "Bash", toolKind: .execute, input: .object(input), worktree: worktree)
    }

    func tool(_ name: String, _ kind: ToolKind, _ input: JSONValue) -> Classification {
        classifier.classify(toolName: name, toolKind: kind, input: input, worktree: worktree)
    }
}

/// A request for a classification, as the codecs would make it.
func request(for c: Classification, question: StructuredQuestion? = nil, capabilities: BackendCapabilities = .claude,
             session: SessionID = "0193aaaa-0000-7000-8000-00000000000a", offered: [ApprovalScope] = []) -> ApprovalRequest
{
    var input: JSONValue = .object([:])
    if let script = c.script { input = ["command": .string(script)] }
    return ApprovalRequest(id: "0193bbbb-0000-7000-8000-00000000000b", sessionID: session, toolCallID: "toolu_1", toolName: c.toolName,
                           input: input, risk: c.risk, capabilities: capabilities, offeredScopes: offered, question: question,
                           createdAt: Timestamp(millisecondsSince1970: 1_000))
}
