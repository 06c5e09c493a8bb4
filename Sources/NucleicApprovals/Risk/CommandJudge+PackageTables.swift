import NucleicProtocol

/// The package managers' subcommands, by what they do: one table per program, read by
/// `lookUp` in `CommandJudge+Packages.swift`.
extension CommandJudge {
    /// Subcommand tables: subcommand → (risk, what it does). `nil` key: no subcommand.
    static let packageTables: [String: [String: (Risk, String)]] = {
        let npmNetwork = ["install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add", "ci",
                          "clean-install", "install-clean", "ic", "install-test", "it", "install-ci-test", "cit", "update", "up", "upgrade", "udpate",
                          "dedupe", "ddp", "audit", "outdated", "view", "v", "info", "show", "search", "s", "se", "find", "publish",
                          "deprecate", "dist-tag", "owner", "access", "login", "adduser", "add-user", "logout", "whoami", "token", "team",
                          "org", "star", "unstar", "stars", "repo", "docs", "bugs", "home", "ping", "hook", "profile", "doctor", "exec", "x",
                          "create", "fund", "sbom", "query"]
        var npm: [String: (Risk, String)] = [:]
        for s in npmNetwork { npm[s] = (.network, "npm \(s) talks to the package registry") }
        for s in ["test", "t", "tst", "run", "run-script", "rum", "urn", "start", "stop", "restart", "rebuild", "build", "explore"] { npm[s] = (.execute, "runs a project script") }
        for s in ["uninstall", "un", "unlink", "remove", "rm", "r", "prune", "pack", "version", "shrinkwrap", "pkg", "init", "set-script"] { npm[s] = (.write, "changes project files") }
        for s in ["ls", "list", "la", "ll", "explain", "why", "prefix", "root", "bin", "help", "help-search", "completion"] { npm[s] = (.readOnly, "shows project information") }
        for s in ["link", "ln", "cache", "config", "c", "get", "set"] { npm[s] = (.hostExec, "npm \(s) changes your npm setup outside the worktree") }
        npm["unpublish"] = (.destructive, "removes a published package from the registry")

        var yarn: [String: (Risk, String)] = [:]
        for s in ["install", "add", "upgrade", "up", "upgrade-interactive", "dlx", "create", "npm", "publish", "info", "outdated", "audit",
                  "login", "logout", "import", "init", "set", "plugin", "dedupe", "fetch"] { yarn[s] = (.network, "yarn \(s) talks to the package registry") }
        yarn[""] = (.network, "yarn installs packages")
        for s in ["remove", "pack", "version"] { yarn[s] = (.write, "changes project files") }
        for s in ["list", "why", "bin", "licenses", "help", "workspaces"] { yarn[s] = (.readOnly, "shows project information") }
        for s in ["global", "link", "cache", "config", "unlink"] { yarn[s] = (.hostExec, "yarn \(s) changes your setup outside the worktree") }

        var pnpm: [String: (Risk, String)] = [:]
        for s in ["install", "i", "add", "update", "up", "upgrade", "dlx", "create", "fetch", "publish", "outdated", "audit", "import", "env", "dedupe", "server", "setup", "self-update", "patch"] {
            pnpm[s] = (.network, "pnpm \(s) talks to the package registry")
        }
        pnpm[""] = (.network, "pnpm installs packages")
        for s in ["remove", "rm", "un", "uninstall", "prune", "pack", "patch-commit"] { pnpm[s] = (.write, "changes project files") }
        for s in ["list", "ls", "ll", "la", "why", "root", "bin", "help", "licenses"] { pnpm[s] = (.readOnly, "shows project information") }
        for s in ["store", "link", "ln", "unlink", "config", "c"] { pnpm[s] = (.hostExec, "pnpm \(s) changes your setup outside the worktree") }

        var bun: [String: (Risk, String)] = [:]
        for s in ["install", "i", "add", "a", "update", "upgrade", "x", "create", "c", "init", "publish", "pm", "outdated", "link", "patch"] { bun[s] = (.network, "bun \(s) talks to the package registry") }
        for s in ["remove", "rm"] { bun[s] = (.write, "changes project files") }

        var pip: [String: (Risk, String)] = [:]
        for s in ["install", "download", "wheel", "index", "search"] { pip[s] = (.network, "pip \(s) talks to the package index") }
        for s in ["list", "show", "freeze", "check", "help", "debug", "inspect", "hash", "--version", "-V"] { pip[s] = (.readOnly, "shows installed packages") }
        for s in ["uninstall", "config", "cache"] { pip[s] = (.hostExec, "pip \(s) changes the Python environment, which may be outside the worktree") }

        var cargo: [String: (Risk, String)] = [:]
        for s in ["install", "publish", "yank", "login", "logout", "owner", "search", "add", "update", "fetch", "vendor", "generate-lockfile", "info", "binstall"] {
            cargo[s] = (.network, "cargo \(s) talks to the crate registry")
        }
        for s in ["build", "b", "check", "c", "test", "t", "run", "r", "bench", "doc", "d", "clippy", "fmt", "fix", "clean", "tree", "metadata", "package", "expand", "nextest", "llvm-cov", "miri", "rustc", "rustdoc", "remove", "rm"] {
            cargo[s] = (.execute, "builds or runs the project")
        }
        for s in ["new", "init"] { cargo[s] = (.write, "creates a crate") }
        for s in ["locate-project", "pkgid", "read-manifest", "verify-project", "version", "--version", "-V", "help", "--list"] { cargo[s] = (.readOnly, "shows project information") }
        cargo["uninstall"] = (.hostExec, "removes a program from ~/.cargo")

        var go: [String: (Risk, String)] = [:]
        for s in ["get", "install", "download"] { go[s] = (.network, "go \(s) fetches modules") }
        for s in ["build", "test", "run", "vet", "fmt", "generate", "list", "doc", "tool", "fix", "bug", "clean", "work"] { go[s] = (.execute, "builds or runs the project") }
        for s in ["version", "help", "env"] { go[s] = (.readOnly, "shows Go's settings") }

        var gem: [String: (Risk, String)] = [:]
        for s in ["install", "update", "push", "fetch", "yank", "owner", "signin", "sources", "outdated", "search", "specific_install"] { gem[s] = (.network, "gem \(s) talks to the gem registry") }
        for s in ["list", "info", "env", "which", "contents", "specification", "help", "query", "--version"] { gem[s] = (.readOnly, "shows installed gems") }
        for s in ["uninstall", "cleanup", "pristine"] { gem[s] = (.hostExec, "gem \(s) changes installed gems outside the worktree") }
        gem["build"] = (.execute, "builds a gem")

        var bundle: [String: (Risk, String)] = [:]
        for s in ["install", "update", "add", "outdated", "lock", "package", "cache", "binstubs"] { bundle[s] = (.network, "bundle \(s) talks to the gem registry") }
        bundle[""] = (.network, "bundle installs gems")
        for s in ["check", "list", "show", "info", "version", "platform", "help"] { bundle[s] = (.readOnly, "shows the bundle") }

        var composer: [String: (Risk, String)] = [:]
        for s in ["install", "i", "require", "update", "u", "upgrade", "create-project", "global", "remove", "rm", "outdated", "self-update", "audit"] { composer[s] = (.network, "composer \(s) talks to the package registry") }
        for s in ["dump-autoload", "dumpautoload", "run-script", "run", "test", "exec"] { composer[s] = (.execute, "runs project scripts") }
        for s in ["show", "info", "validate", "licenses", "depends", "why", "help", "list"] { composer[s] = (.readOnly, "shows project information") }

        var brew: [String: (Risk, String)] = [:]
        for s in ["install", "reinstall", "upgrade", "update", "tap", "fetch", "search", "outdated", "bundle"] { brew[s] = (.network, "brew \(s) talks to the network") }
        for s in ["list", "ls", "info", "desc", "--prefix", "--cellar", "--version", "config", "doctor", "deps", "uses", "leaves", "home"] { brew[s] = (.readOnly, "shows installed packages") }
        for s in ["uninstall", "remove", "rm", "cleanup", "untap", "link", "unlink", "pin", "unpin", "services"] { brew[s] = (.hostExec, "brew \(s) changes installed software") }

        var apt: [String: (Risk, String)] = [:]
        for s in ["install", "reinstall", "update", "upgrade", "dist-upgrade", "full-upgrade", "download", "source", "build-dep", "changelog", "satisfy"] {
            apt[s] = (.network, "installs or downloads system packages")
        }
        for s in ["remove", "purge", "autoremove", "clean", "autoclean", "autopurge", "mark", "hold", "unhold", "edit-sources"] { apt[s] = (.hostExec, "changes system packages") }
        for s in ["list", "show", "search", "policy", "depends", "rdepends", "showpkg", "help", "moo", "-v", "--version"] { apt[s] = (.readOnly, "shows system packages") }

        var dnf: [String: (Risk, String)] = [:]
        for s in ["install", "in", "update", "upgrade", "up", "reinstall", "downgrade", "makecache", "check-update", "search", "download", "groupinstall", "group", "distro-sync", "swap", "add", "fetch", "refresh", "ref", "dup", "dist-upgrade", "sync"] {
            dnf[s] = (.network, "installs or downloads system packages")
        }
        for s in ["remove", "erase", "rm", "autoremove", "clean", "del", "delete"] { dnf[s] = (.hostExec, "changes system packages") }
        for s in ["list", "ls", "info", "provides", "repolist", "history", "repoquery", "deplist", "help", "packages"] { dnf[s] = (.readOnly, "shows system packages") }

        return [
            "npm": npm, "yarn": yarn, "pnpm": pnpm, "bun": bun, "pip": pip, "pipx": ["install": (.network, "pipx installs a program"), "run": (.network, "pipx run downloads and runs a package"), "list": (.readOnly, "lists programs"), "uninstall": (.hostExec, "removes a program")],
            "cargo": cargo, "go": go, "gem": gem, "bundle": bundle, "bundler": bundle, "composer": composer, "brew": brew,
            "apt": apt, "apt-get": apt, "aptitude": apt, "dnf": dnf, "yum": dnf, "microdnf": dnf, "zypper": dnf, "apk": dnf,
        ]
    }()
}
