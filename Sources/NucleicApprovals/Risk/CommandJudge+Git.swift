import NucleicProtocol

/// git: reading commands are readOnly, history-changing ones write, talking to remotes is
/// network, and what loses work (`reset --hard`, `push --force`, `clean -f`, `branch -D`, …) is
/// destructive. Changes to the repository's configuration are hostExec: a session's worktree
/// shares it with the user's main checkout.
extension CommandJudge {
    static let gitReadOnly: Set<String> = [
        "status", "log", "diff", "show", "blame", "annotate", "grep", "ls-files", "ls-tree", "rev-parse", "rev-list", "describe",
        "shortlog", "cat-file", "name-rev", "merge-base", "show-ref", "for-each-ref", "whatchanged", "count-objects", "fsck",
        "verify-commit", "verify-tag", "check-ignore", "check-attr", "check-ref-format", "cherry", "range-diff", "help", "version",
        "var", "show-branch", "diff-tree", "diff-files", "diff-index", "ls-remote-local", "reflog-show", "--version", "-v", "--help",
        "get-tar-commit-id", "verify-pack", "show-index", "mailinfo", "stripspace", "column", "interpret-trailers", "patch-id",
    ]
    static let gitWrite: Set<String> = [
        "add", "commit", "switch", "mv", "rm", "merge", "rebase", "cherry-pick", "revert", "am", "apply", "init", "notes", "bisect",
        "format-patch", "sparse-checkout", "update-index", "read-tree", "checkout-index", "commit-tree", "write-tree", "hash-object",
        "mktag", "mktree", "pack-refs", "repack", "maintenance", "replace", "restore", "checkout", "stage", "unstage", "mergetool",
        "difftool", "citool", "gui", "bundle", "fast-import", "merge-file", "lfs", "symbolic-ref",
    ]
    static let gitNetwork: Set<String> = ["fetch", "pull", "clone", "ls-remote", "send-email", "request-pull", "svn", "p4", "remote-update"]

    mutating func judgeGit() {
        let o = CommandOptions(c.words, from: 1, valuedShort: Set("Cc"),
                               valuedLong: ["git-dir", "work-tree", "namespace", "super-prefix", "exec-path", "config-env", "attr-source"],
                               stopAtFirstOperand: true)
        for dir in o.values("-C") { read(dir) }
        for dir in o.values("--git-dir", "--work-tree") { write(dir) }
        if !o.values("-c", "--config-env").isEmpty { raise(.execute, "sets git configuration for this run (it can name programs git runs)") }
        if o.value("--exec-path") != nil { raise(.unknown, "runs git's programs from another folder") }
        guard let index = o.firstOperand, let sub = c.words[index].staticValue else {
            raise(o.firstOperand == nil ? .readOnly : .unknown, o.firstOperand == nil ? "shows git's help" : "runs a git subcommand named at run time")
            return
        }
        let rest = CommandOptions(c.words, from: index + 1, valuedShort: Set("mFCcSuoX"),
                                  valuedLong: ["message", "file", "reuse-message", "reedit-message", "author", "date", "template", "output", "format", "pretty", "since", "until", "upload-pack", "receive-pack", "exec", "depth", "branch", "origin", "reference", "separate-git-dir", "set-upstream-to", "points-at", "contains", "merged", "no-merged", "sort", "strategy", "strategy-option", "onto", "prune"],
                                  stopAtFirstOperand: false)
        let words = c.words[(index + 1)...]
        func has(_ names: String...) -> Bool { rest.hasAny(names) }
        func flag(_ letters: Character...) -> Bool {
            words.contains { w in
                guard let v = w.staticValue, v.hasPrefix("-"), !v.hasPrefix("--") else { return false }
                return letters.contains { v.dropFirst().contains($0) }
            }
        }
        let operands = rest.operands.compactMap(\.staticValue)
        switch sub {
        case "push":
            raise(.network, "pushes to another repository")
            if has("--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "--prune") || flag("f", "d")
                || rest.options.contains(where: { $0.name.hasPrefix("--force") })
                || operands.dropFirst().contains(where: { $0.hasPrefix("+") || $0.hasPrefix(":") })
            {
                raise(.destructive, "rewrites or deletes history on the remote (force push, delete, mirror)")
            }
        case "reset":
            if has("--hard") { raise(.destructive, "discards commits and uncommitted changes (reset --hard)") } else { raise(.write, "moves the branch or the index") }
        case "clean":
            if has("-n", "--dry-run") && !has("-f", "--force") {
                raise(.readOnly, "lists what git clean would delete")
            } else {
                raise(.destructive, "deletes untracked files (git clean)")
            }
        case "checkout", "switch", "restore":
            let wholeTree = operands.contains { $0 == "." || $0 == ":/" || $0 == "*" }
            if has("-f", "--force", "--discard-changes") || (wholeTree && !has("--staged") || (sub == "checkout" && wholeTree)) {
                raise(.destructive, "discards uncommitted changes in the whole worktree")
            } else {
                raise(.write, sub == "restore" ? "restores files" : "switches branches or restores files")
            }
        case "branch":
            if has("-D") || (has("-d", "--delete") && (has("-f", "--force") || flag("f"))) {
                raise(.destructive, "deletes a branch even if it is not merged (branch -D)")
            } else if has("-d", "--delete", "-m", "-M", "-c", "-C", "--move", "--copy", "--set-upstream-to", "-u", "--unset-upstream", "--edit-description") {
                raise(.write, "changes branches")
            } else if !operands.isEmpty, !has("-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--contains", "--merged", "--no-merged", "--show-current", "--points-at") {
                raise(.write, "creates a branch")
            } else {
                raise(.readOnly, "lists branches")
            }
        case "tag":
            if has("-d", "--delete") || (!operands.isEmpty && !has("-l", "--list", "-n", "--contains", "--points-at", "--merged", "--no-merged", "-v", "--verify")) {
                raise(.write, "creates or deletes a tag")
            } else {
                raise(.readOnly, "lists tags")
            }
        case "stash":
            switch operands.first ?? "push" {
            case "list", "show": raise(.readOnly, "shows stashes")
            case "drop", "clear": raise(.destructive, "deletes stashed changes")
            default: raise(.write, "stashes or restores changes")
            }
        case "reflog":
            switch operands.first ?? "show" {
            case "expire", "delete": raise(.destructive, "deletes reflog entries (the way back to lost commits)")
            default: raise(.readOnly, "shows the reflog")
            }
        case "gc":
            if rest.options.contains(where: { $0.name == "--prune" && ($0.value?.staticValue == "now" || $0.value?.staticValue == "all") })
                || words.contains(where: { $0.staticValue == "--prune=now" || $0.staticValue == "--prune=all" })
            {
                raise(.destructive, "prunes unreachable commits now")
            } else {
                raise(.write, "packs the repository")
            }
        case "prune", "filter-branch", "filter-repo":
            raise(.destructive, "git \(sub) can lose commits for good")
        case "update-ref":
            raise(has("-d") ? .destructive : .write, has("-d") ? "deletes a ref" : "moves a ref")
        case "config":
            let reading = has("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--list", "-l", "--show-origin", "--show-scope", "--name-only", "get", "list")
                || operands.first == "get" || operands.first == "list"
                || (operands.count == 1 && !has("--unset", "--unset-all", "--add", "--replace-all", "--edit", "-e", "--rename-section", "--remove-section"))
            if reading {
                raise(.readOnly, "reads git configuration")
            } else {
                raise(.hostExec, has("--global", "--system") ? "changes your git configuration outside the worktree" : "changes the repository's configuration, shared with your main checkout")
            }
        case "remote":
            switch operands.first ?? "" {
            case "", "-v", "get-url": raise(.readOnly, "lists remotes")
            case "show", "prune", "update": raise(.network, "git remote \(operands[0]) talks to the remote")
            default: raise(.hostExec, "changes the repository's remotes, shared with your main checkout")
            }
        case "worktree":
            raise(operands.first == "list" ? .readOnly : .hostExec, operands.first == "list" ? "lists worktrees" : "manages worktrees of your main repository")
        case "submodule":
            switch operands.first ?? "status" {
            case "status", "summary": raise(.readOnly, "shows submodules")
            case "foreach": raise(.unknown, "git submodule foreach runs a command in each submodule")
            default: raise(.network, "git submodule \(operands[0]) fetches submodules")
            }
        case "archive":
            if rest.value("--remote") != nil || words.contains(where: { $0.staticValue?.hasPrefix("--remote") ?? false }) { raise(.network, "fetches an archive from a remote") }
            write(rest.value("-o", "--output"))
            raise(.readOnly, "writes an archive of a commit")
        case "clone":
            raise(.network, "clones another repository")
            if operands.count > 1 { write(rest.operands[1]) } else { accessCwd(.write) }
        case "diff", "log", "show", "format-patch":
            write(rest.value("--output", "-o"))
            if has("--ext-diff") { raise(.execute, "runs an external diff program") }
            raise(sub == "format-patch" ? .write : .readOnly, sub == "format-patch" ? "writes patch files" : "reads history")
        default:
            if Self.gitReadOnly.contains(sub) {
                raise(.readOnly, "reads the repository")
                if sub == "grep", has("-O", "--open-files-in-pager") { raise(.execute, "opens a pager program") }
            } else if Self.gitWrite.contains(sub) {
                raise(.write, "changes the repository")
                if sub == "bisect", operands.first == "run" { raise(.execute, "git bisect run runs a command") }
                if ["mergetool", "difftool", "citool", "gui"].contains(sub) { raise(.execute, "runs a \(sub) program") }
                if sub == "lfs", ["pull", "push", "fetch", "install", "clone"].contains(operands.first ?? "") { raise(.network, "git lfs talks to the LFS server") }
            } else if Self.gitNetwork.contains(sub) {
                raise(.network, "git \(sub) talks to another repository")
            } else {
                raise(.unknown, "git \(sub) is an alias or a subcommand Nucleic does not know")
            }
        }
        pathLikeArguments(c.words[(index + 1)...])  // `git add ../x`, `git commit -F /tmp/msg`
        output = ["ls-files", "diff", "ls-tree", "status"].contains(sub) && (sub == "ls-files" || has("--name-only", "--name-status", "--porcelain", "-z", "--short", "-s"))
            ? .inside : nil
    }
}
