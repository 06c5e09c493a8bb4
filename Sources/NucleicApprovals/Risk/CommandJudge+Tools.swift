import NucleicProtocol

/// System administration, network clients, package managers, and development tools.
extension CommandJudge {
    // MARK: System

    static let readOnlySystem: Set<String> = [
        "date", "uptime", "ps", "pgrep", "pidof", "lsof", "ss", "netstat", "w", "who", "last", "free", "vmstat", "iostat", "lscpu",
        "lsblk", "lsusb", "lspci", "lsmod", "top", "htop", "man", "info", "apropos", "whatis", "journalctl", "dmesg", "atq",
        "systemd-analyze", "hostnamectl", "timedatectl", "env-update", "fc-list", "xdpyinfo",
    ]
    static let hostSystem: Set<String> = [
        "systemctl", "service", "launchctl", "loginctl", "crontab", "at", "batch", "chroot", "umount", "swapon", "swapoff", "modprobe",
        "insmod", "rmmod", "iptables", "ip6tables", "nft", "ufw", "firewall-cmd", "useradd", "userdel", "usermod", "groupadd",
        "groupdel", "passwd", "chpasswd", "visudo", "setcap", "nsenter", "unshare", "tmux", "screen", "xdg-open", "open", "osascript",
        "gsettings", "defaults", "sysctl", "ifconfig", "route", "mount", "ip", "gpg", "gpg2", "security", "keyctl", "dbus-send",
        "notify-send", "pkill", "killall", "killall5", "skill", "slay", "sudoedit", "daemonize", "nohup", "su", "sudo", "doas", "pkexec",
    ]

    mutating func judgeSystem(_ program: String) -> Bool {
        switch program {
        case "reboot", "shutdown", "halt", "poweroff", "init", "telinit":
            raise(.destructive, "stops or restarts the machine")
        case "kill":
            // Signals to the session's own jobs (`%1`, `$!`) are fine; pids may be anyone's.
            let targets = args.filter { !($0.staticValue?.hasPrefix("-") ?? false) }
            if !targets.isEmpty, targets.allSatisfy({ $0.staticValue?.hasPrefix("%") ?? ($0.source == "$!" || $0.source == "\"$!\"") }) {
                raise(.execute, "signals the script's own background jobs")
            } else if args.contains(where: { $0.staticValue == "-l" || $0.staticValue == "-L" }) {
                inert = true
            } else {
                raise(.hostExec, "signals processes that may not belong to the session")
            }
        case "sysctl" where !args.contains(where: { $0.staticValue == "-w" || ($0.staticValue?.contains("=") ?? false) }):
            raise(.readOnly, "reads kernel settings")
        case "mount" where args.isEmpty, "ifconfig" where args.isEmpty:
            raise(.readOnly, "lists system state")
        case "ip" where ["a", "addr", "address", "r", "route", "link", "neigh", "-br", "-c"].contains(args.first?.staticValue ?? "")
            && !args.contains(where: { ["add", "del", "delete", "set", "flush", "change", "replace"].contains($0.staticValue ?? "") }):
            raise(.readOnly, "lists network settings")
        case "crontab" where args.count == 1 && args[0].staticValue == "-l":
            raise(.readOnly, "lists scheduled jobs")
        case "hostname":
            raise(args.filter { !($0.staticValue?.hasPrefix("-") ?? false) }.isEmpty ? .readOnly : .hostExec, "the machine's name")
        case "dc":
            raise(.execute, "dc can run shell commands")
        default:
            if Self.readOnlySystem.contains(program) {
                raise(.readOnly, "shows system state")
            } else if Self.hostSystem.contains(program) {
                raise(.hostExec, "\(program) acts on the machine outside the session")
            } else {
                return false
            }
        }
        return true
    }

    // MARK: Network

    static let networkClients: Set<String> = [
        "ssh", "sftp", "mosh", "telnet", "ftp", "lftp", "nc", "ncat", "netcat", "socat", "nmap", "ping", "ping6", "dig", "nslookup",
        "host", "whois", "traceroute", "tracepath", "mtr", "ssh-copy-id", "ssh-keyscan", "gh", "hub", "glab", "tea", "aws", "gcloud",
        "gsutil", "az", "doctl", "heroku", "vercel", "netlify", "fly", "flyctl", "firebase", "wrangler", "railway", "supabase",
        "stripe", "ngrok", "tailscale", "cloudflared", "sentry-cli", "op", "vault", "consul", "nomad", "ansible", "ansible-playbook",
        "lynx", "w3m", "links", "svn", "tldr", "cf", "oc", "eksctl", "minikube", "kind", "k3d", "gcutil", "s3cmd", "rclone",
    ]

    mutating func judgeNetwork(_ program: String) -> Bool {
        switch program {
        case "curl", "wget", "http", "https", "xh", "aria2c", "httpie":
            raise(.network, "talks to the network")
            judgeDownloader(program)
        case "scp", "rsync":
            let o = program == "scp" ? options("cFiJloPSD", []) : options("eBfT", ["rsh", "exclude", "include", "filter", "temp-dir", "log-file", "password-file", "exclude-from", "include-from", "files-from", "backup-dir", "compare-dest", "copy-dest", "link-dest", "partial-dir", "chmod", "chown", "rsync-path", "port", "bwlimit", "max-size", "min-size", "timeout", "out-format", "info", "debug"])
            let operands = o.operands
            let remote = operands.contains { w in
                guard let v = w.staticValue else { return true }
                if v.hasPrefix("rsync://") { return true }
                guard let colon = v.firstIndex(of: ":") else { return false }
                return !v[..<colon].contains("/")
            }
            if remote || program == "scp" { raise(.network, "copies files to or from another machine") }
            if o.hasAny("--delete", "--delete-before", "--delete-during", "--delete-after", "--delete-excluded", "--remove-source-files") {
                raise(.destructive, "\(program) deletes files at the destination or source")
            }
            if o.value("-e", "--rsh", "--rsync-path") != nil { raise(.execute, "\(program) runs a remote shell command") }
            for (k, word) in operands.enumerated() {
                if let v = word.staticValue, let colon = v.firstIndex(of: ":"), !v[..<colon].contains("/") { continue }
                if k == operands.count - 1, operands.count > 1 { write(word) } else { read(word) }
            }
            if !remote, program == "rsync" { raise(.write, "copies files") }
        case "openssl":
            let sub = args.first?.staticValue ?? ""
            if ["s_client", "s_server", "s_time", "ocsp"].contains(sub) { raise(.network, "openssl \(sub) talks to the network") }
            raise(.execute, "runs openssl")
            pathLikeArguments(args)
        case "kubectl", "helm":
            let sub = args.first { !($0.staticValue?.hasPrefix("-") ?? true) }?.staticValue ?? ""
            if ["delete", "drain", "uninstall", "rollback"].contains(sub) { raise(.destructive, "\(program) \(sub) removes things from a cluster") }
            raise(.network, "\(program) talks to a cluster")
        case "terraform", "tofu", "pulumi", "cdk", "serverless", "sls", "sam":
            let sub = args.first { !($0.staticValue?.hasPrefix("-") ?? true) }?.staticValue ?? ""
            if sub == "destroy" || args.contains(where: { $0.staticValue == "-destroy" }) {
                raise(.destructive, "\(program) destroy tears down infrastructure")
            } else if ["fmt", "validate", "version", "graph", "console", "synth"].contains(sub) {
                raise(.execute, "runs \(program) \(sub)")
            } else {
                raise(.network, "\(program) \(sub) talks to cloud providers")
            }
        case "hg":
            let sub = args.first?.staticValue ?? ""
            if ["status", "st", "log", "diff", "show", "summary", "id", "identify", "annotate", "blame", "cat", "files", "manifest", "heads", "branches", "tags", "root", "help", "version"].contains(sub) {
                raise(.readOnly, "reads the repository")
            } else if ["push", "pull", "clone", "incoming", "in", "outgoing", "out", "fetch"].contains(sub) {
                raise(.network, "hg \(sub) talks to another repository")
            } else {
                raise(.write, "hg \(sub) changes the repository")
            }
        default:
            guard Self.networkClients.contains(program) else { return false }
            raise(.network, "\(program) talks to the network")
            pathLikeArguments(args)
        }
        return true
    }

    /// curl/wget: what they save (write) and upload (read).
    mutating func judgeDownloader(_ program: String) {
        let o = options("oOTdFKPHXAbceEuUxyYzmw", ["output", "upload-file", "data", "data-binary", "data-raw", "data-urlencode", "form", "config", "output-document", "directory-prefix", "post-file", "body-file", "cookie-jar", "cookie", "header", "request", "user-agent", "user", "proxy", "cacert", "cert", "key", "append-output", "output-file", "input-file", "load-cookies", "save-cookies", "trace", "trace-ascii", "dump-header", "stderr", "netrc-file"])
        for name in ["-o", "--output", "--output-document", "--cookie-jar", "--save-cookies", "--trace", "--trace-ascii", "--dump-header", "--stderr", "--append-output", "--output-file", "-a"] {
            for value in o.values(name) where value.staticValue != "-" { write(value) }
        }
        if program == "wget" {
            for value in o.values("-O") where value.staticValue != "-" { write(value) }
            if let dir = o.value("-P", "--directory-prefix") { write(dir) } else if o.values("-O").isEmpty { accessCwd(.write) }
        } else if o.hasAny("-O", "--remote-name", "--remote-name-all") {
            accessCwd(.write)
        }
        for name in ["-T", "--upload-file", "-K", "--config", "--post-file", "--body-file", "--load-cookies", "-i", "--input-file", "--netrc-file", "--cacert", "--cert", "--key"] {
            for value in o.values(name) { read(value) }
        }
        for name in ["-d", "--data", "--data-binary", "--data-urlencode", "-F", "--form"] {
            for value in o.values(name) {
                guard let v = value.staticValue else { continue }
                if let at = v.firstIndex(of: "@"), v[..<at].allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == "=" }) {
                    let file = String(v[v.index(after: at)...]).split(separator: ";").first.map(String.init) ?? ""
                    if !file.isEmpty, file != "-" { read(.literal(file)) }
                }
                if let lt = v.firstIndex(of: "<"), v.hasSuffix(v[lt...]), v[..<lt].hasSuffix("=") {
                    read(.literal(String(v[v.index(after: lt)...])))
                }
            }
        }
        for word in o.operands {
            if let v = word.staticValue, v.lowercased().hasPrefix("file:") { raise(.hostExec, "reads a local file through a file: URL") }
        }
    }

    // MARK: Packages

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

    mutating func judgePackages(_ program: String) -> Bool {
        guard judgePackageCommand(program) else { return false }
        pathLikeArguments(args)  // `npm test -- --out /etc/x`, `pip install ~/x.whl`
        return true
    }

    mutating func judgePackageCommand(_ program: String) -> Bool {
        switch program {
        case "npx", "pnpx", "bunx", "uvx":
            if args.contains(where: { ["--no", "--no-install", "--offline"].contains($0.staticValue ?? "") }) {
                raise(.execute, "\(program) runs an installed package")
            } else {
                raise(.network, "\(program) may download and run a package from the registry")
            }
        case "pip", "pipx":
            let o = options("rcetib", ["requirement", "constraint", "editable", "target", "index-url", "extra-index-url", "python", "prefix", "root", "src", "upgrade-strategy", "find-links", "platform", "cache-dir", "log"])
            lookUp(program, subcommand(o).0 ?? "")
            if o.hasAny("--user") || o.value("--prefix", "--root", "--target") != nil { raise(.hostExec, "pip installs outside the project's environment") }
        case "uv":
            let o = options("p", ["python", "directory", "project", "index-url", "extra-index-url", "cache-dir", "config-file"])
            let (sub, next) = subcommand(o)
            switch sub ?? "" {
            case "pip":
                let inner = CommandOptions(c.words, from: next, valuedShort: Set("rcet"), valuedLong: ["requirement", "constraint", "editable", "target", "python", "prefix"], stopAtFirstOperand: false)
                lookUp("pip", inner.firstOperand.flatMap { c.words[$0].staticValue } ?? "")
            case "add", "remove", "sync", "lock", "tree", "publish", "export": raise(.network, "uv \(sub!) resolves packages from the index")
            case "tool": raise(next < c.words.count && c.words[next].staticValue == "list" ? .readOnly : .network, "uv tool installs or runs tools")
            case "python": raise(next < c.words.count && ["list", "find", "dir"].contains(c.words[next].staticValue ?? "") ? .readOnly : .network, "uv python manages Python installations")
            case "venv", "init": raise(.write, "creates a project or environment"); write(Array(o.operands.dropFirst()))
            case "build", "run": raise(.execute, "builds or runs the project")
            case "cache": raise(.hostExec, "uv cache changes uv's cache outside the worktree")
            case "self": raise(.network, "uv self updates uv")
            case "version", "--version", "help": raise(.readOnly, "shows uv's version")
            default: raise(.execute, "runs uv \(sub ?? "")")
            }
        case "poetry", "pdm", "rye", "hatch", "pipenv":
            let (sub, _) = subcommand(options("C", ["directory", "project"]))
            switch sub ?? "" {
            case "install", "add", "update", "lock", "remove", "publish", "self", "source", "sync", "upgrade", "shell": raise(.network, "\(program) \(sub!) resolves or installs packages")
            case "build", "run", "test", "check": raise(.execute, "builds or runs the project")
            case "show", "env", "version", "config", "list", "--version", "graph", "info", "search": raise(.readOnly, "shows project information")
            case "init", "new": raise(.write, "creates a project")
            default: raise(.execute, "runs \(program) \(sub ?? "")")
            }
        case "conda", "mamba", "micromamba":
            let (sub, next) = subcommand(options())
            switch sub ?? "" {
            case "install", "create", "update", "upgrade", "search": raise(.network, "\(program) \(sub!) downloads packages")
            case "env":
                let inner = next < c.words.count ? c.words[next].staticValue ?? "" : ""
                raise(inner == "list" || inner == "export" ? .readOnly : (inner == "remove" ? .hostExec : .network), "\(program) env \(inner)")
            case "list", "info", "--version", "config": raise(.readOnly, "shows environments")
            case "activate", "deactivate": inert = true
            case "remove", "uninstall", "clean": raise(.hostExec, "\(program) \(sub!) changes environments outside the worktree")
            default: raise(.execute, "runs \(program) \(sub ?? "")")
            }
        case "npm":
            let o = options("wC", ["prefix", "workspace", "registry", "cache", "userconfig", "globalconfig", "loglevel", "tag", "otp", "access", "include", "omit"])
            let (sub, next) = subcommand(o)
            if let prefix = o.value("--prefix", "-C") { read(prefix) }
            if o.hasAny("-g", "--global", "--location=global") { raise(.hostExec, "npm -g changes globally installed packages") }
            if sub == "config" || sub == "c", next < c.words.count, ["get", "list", "ls"].contains(c.words[next].staticValue ?? "") {
                raise(.readOnly, "shows npm settings")
            } else if sub == "cache", next < c.words.count, ["ls", "verify"].contains(c.words[next].staticValue ?? "") {
                raise(.readOnly, "shows npm's cache")
            } else if sub == "init", next < c.words.count, !(c.words[next].staticValue?.hasPrefix("-") ?? true) {
                raise(.network, "npm init <initializer> downloads and runs a package")
            } else {
                lookUp("npm", sub ?? "", fallback: (.execute, "runs npm \(sub ?? "")"))
            }
        case "yarn", "pnpm", "bun":
            let o = options("C", ["cwd", "dir", "filter", "registry"])
            let (sub, _) = subcommand(o)
            if o.hasAny("-g", "--global") { raise(.hostExec, "\(program) -g changes globally installed packages") }
            if program == "bun", let sub, sub.contains(".") || sub.contains("/") {
                runFile(c.words[o.firstOperand!])
            } else {
                lookUp(program, sub ?? "", fallback: (.execute, "runs a project script"))
            }
        case "cargo":
            var o = options("Zj", ["manifest-path", "config", "color", "jobs", "target", "target-dir", "package", "features", "bin", "example", "test", "bench", "profile"])
            if let first = o.firstOperand, c.words[first].staticValue?.hasPrefix("+") ?? false {  // +toolchain
                o = CommandOptions(c.words, from: first + 1, valuedShort: Set("Zj"), valuedLong: ["manifest-path", "config", "color", "target-dir"], stopAtFirstOperand: true)
            }
            read(o.value("--manifest-path"))
            write(o.value("--target-dir"))
            lookUp("cargo", subcommand(o).0 ?? "", fallback: (.execute, "runs a cargo subcommand"))
        case "go":
            let (sub, next) = subcommand(options("C", []))
            if sub == "mod" {
                let inner = next < c.words.count ? c.words[next].staticValue ?? "" : ""
                raise(["download", "tidy", "vendor"].contains(inner) ? .network : .execute, "go mod \(inner)")
            } else if sub == "env", args.contains(where: { $0.staticValue == "-w" || $0.staticValue == "-u" }) {
                raise(.hostExec, "go env -w changes Go's settings for your user")
            } else if sub == "clean", args.contains(where: { $0.staticValue == "-modcache" || $0.staticValue == "-cache" }) {
                raise(.hostExec, "go clean deletes Go's caches outside the worktree")
            } else {
                lookUp("go", sub ?? "", fallback: (.execute, "runs go \(sub ?? "")"))
            }
            pathLikeArguments(args)
        case "gem", "bundle", "bundler", "composer", "brew", "apt", "apt-get", "aptitude", "dnf", "yum", "microdnf", "zypper", "apk":
            let o = options("octqy", ["option", "config-file", "target-release", "root", "installroot", "repo"])
            lookUp(program, subcommand(o).0 ?? "", fallback: (program == "gem" || program == "composer" ? .execute : .network, "runs \(program)"))
        case "apt-cache", "dpkg-query", "apt-file":
            raise(.readOnly, "shows system packages")
        case "rpm" where !args.contains(where: { ["-i", "-U", "-e", "--install", "--upgrade", "--erase", "-F"].contains($0.staticValue ?? "") }):
            raise(.readOnly, "shows system packages")
        case "dpkg", "rpm":
            let readOnlyFlags: Set<String> = ["-l", "-L", "-s", "-S", "-p", "--list", "--listfiles", "--status", "--search", "--print-architecture", "--get-selections", "-q", "-qa", "-qi", "-ql", "--query", "--version"]
            raise(args.contains(where: { readOnlyFlags.contains($0.staticValue ?? "") }) ? .readOnly : .hostExec, "\(program) installs or queries system packages")
        case "pacman", "yay", "paru":
            let flag = args.first?.staticValue ?? ""
            if flag.hasPrefix("-Q") || flag == "--query" { raise(.readOnly, "shows system packages") }
            else if flag.hasPrefix("-S") || flag.hasPrefix("-F") || flag == "--sync" { raise(.network, "installs or downloads system packages") }
            else { raise(.hostExec, "changes system packages") }
        case "snap", "flatpak", "port", "nix-env", "nix", "nix-shell", "nix-build", "emerge", "xbps-install", "pkg", "choco", "winget", "scoop", "sdkmanager", "rustup", "asdf", "mise", "nvm", "pyenv", "rbenv", "volta", "fnm", "sdk", "swiftly", "juliaup", "ghcup", "opam":
            let sub = args.first { !($0.staticValue?.hasPrefix("-") ?? true) }?.staticValue ?? ""
            if ["list", "ls", "info", "show", "which", "current", "version", "--version", "help", "-q", "search"].contains(sub) && sub != "search" {
                raise(.readOnly, "shows installed software")
            } else if ["remove", "uninstall", "rm", "del"].contains(sub) {
                raise(.hostExec, "\(program) \(sub) removes installed software")
            } else {
                raise(.network, "\(program) \(sub) installs or downloads software")
            }
        default:
            return false
        }
        return true
    }

    mutating func lookUp(_ table: String, _ sub: String, fallback: (Risk, String) = (.execute, "runs a package tool")) {
        let (risk, reason) = Self.packageTables[table]?[sub] ?? fallback
        raise(risk, reason)
    }

    // MARK: Development

    static let projectTools: Set<String> = [
        "make", "gmake", "cmake", "ninja", "meson", "bazel", "bazelisk", "buck", "buck2", "just", "task", "rake", "gradle", "gradlew",
        "mvn", "mvnw", "ant", "sbt", "mill", "xcodebuild", "xcrun", "swiftc", "rustc", "gcc", "g++", "cc", "c++", "clang", "clang++",
        "ld", "as", "javac", "java", "kotlinc", "kotlin", "scala", "scalac", "ghc", "cabal", "stack", "dotnet", "msbuild", "tsc",
        "eslint", "prettier", "jest", "vitest", "mocha", "ava", "tap", "webpack", "vite", "esbuild", "rollup", "parcel", "turbo", "nx",
        "lerna", "black", "ruff", "mypy", "pyright", "flake8", "pylint", "isort", "pytest", "py.test", "tox", "nox", "coverage",
        "gofmt", "goimports", "golangci-lint", "staticcheck", "rustfmt", "clippy-driver", "shellcheck", "shfmt", "clang-format",
        "clang-tidy", "swiftlint", "swiftformat", "ktlint", "rubocop", "rspec", "phpunit", "phpstan", "elixir", "mix", "iex", "erl",
        "rebar3", "zig", "nim", "crystal", "dart", "flutter", "R", "Rscript", "julia", "lua", "luajit", "ruby", "irb", "perl", "php",
        "node", "ts-node", "tsx", "deno", "python", "pypy", "ipython", "jupyter", "sqlite3", "psql", "mysql", "redis-cli", "nodemon",
        "entr", "hyperfine", "valgrind", "gdb", "lldb", "strace", "ltrace", "perf", "time", "xvfb-run", "playwright", "cypress",
        "storybook", "next", "nuxt", "astro", "remix", "ng", "vue-cli-service", "react-scripts", "expo", "pod", "fastlane",
        "protoc", "buf", "sqlx", "diesel", "prisma", "alembic", "flask", "django-admin", "manage.py", "uvicorn", "gunicorn",
        "swift", "sh", "bash", "zsh", "dash", "ksh", "ash", "fish",
    ]

    mutating func judgeDevelopment(_ program: String) -> Bool {
        switch program {
        case "git":
            judgeGit()
            return true
        case "docker", "podman", "nerdctl":
            judgeDocker(program)
            return true
        case "python", "pypy":
            judgePython()
            return true
        case "swift":
            let (sub, next) = subcommand(options("", []))
            switch sub ?? "" {
            case "build", "test", "run", "repl": raise(.execute, "builds or runs the project")
            case "package":
                let inner = next < c.words.count ? c.words[next].staticValue ?? "" : ""
                switch inner {
                case "resolve", "update", "fetch", "add-dependency", "edit": raise(.network, "swift package \(inner) fetches dependencies")
                case "init": raise(.write, "creates a package")
                case "describe", "dump-package", "show-dependencies", "compute-checksum", "tools-version": raise(.readOnly, "shows the package")
                case "purge-cache": raise(.hostExec, "deletes SwiftPM's caches outside the worktree")
                default: raise(.execute, "runs swift package \(inner)")
                }
            case "sdk": raise(.network, "swift sdk installs SDKs")
            case "--version", "-version": raise(.readOnly, "shows Swift's version")
            case let file where file.hasSuffix(".swift"): runFile(c.words[next - 1])
            default: raise(.execute, "runs swift \(sub ?? "")")
            }
            pathLikeArguments(args)
            return true
        case "deno":
            let sub = args.first?.staticValue ?? ""
            if ["install", "add", "cache", "upgrade", "publish"].contains(sub) || args.contains(where: { $0.staticValue?.hasPrefix("http") ?? false }) {
                raise(.network, "deno fetches remote modules")
            } else {
                raise(.execute, "runs the project")
            }
            pathLikeArguments(args)
            return true
        case "make", "gmake":
            let o = options("CfIjlWoe", ["directory", "file", "makefile", "include-dir", "jobs", "load-average", "what-if", "old-file", "assume-old", "new-file", "assume-new", "eval"])
            for dir in o.values("-C", "--directory") { read(dir) }
            for file in o.values("-f", "--file", "--makefile") { read(file) }
            raise(.execute, "runs the project's build")
            pathLikeArguments(o.operands)
            return true
        default:
            guard Self.projectTools.contains(program) else { return false }
            if ["--version", "-version", "-V", "--help", "-h"].contains(args.first?.staticValue ?? "-"), args.count == 1 {
                raise(.readOnly, "shows \(program)'s version or help")
            } else {
                raise(.execute, "runs \(program)")
                if Self.interpreters.contains(program), let script = args.first(where: { !($0.staticValue?.hasPrefix("-") ?? true) }) {
                    read(script)  // the script it runs
                    pathLikeArguments(args.filter { $0 != script })
                } else {
                    pathLikeArguments(args)
                }
                extraArguments(.read)
            }
            return true
        }
    }

    static let interpreters: Set<String> = ["node", "ruby", "perl", "php", "lua", "luajit", "Rscript", "julia", "ts-node", "tsx", "sh", "bash", "zsh", "dash", "ksh", "ash", "fish"]

    mutating func judgePython() {
        let words = c.words
        var j = 1
        while j < words.count, let v = words[j].staticValue, v.hasPrefix("-"), v.count > 1 {
            switch v {
            case "-c":
                raise(.execute, "runs Python code")
                pathLikeArguments(words[(j + 1)...])
                return
            case "-m":
                guard j + 1 < words.count, let module = words[j + 1].staticValue else {
                    raise(.unknown, "runs a Python module named at run time")
                    return
                }
                judgePythonModule(module, Array(words[(j + 2)...]))
                return
            case "-W", "-X", "-Q":
                j += 2
            case "--version", "-V", "--help", "-h":
                raise(.readOnly, "shows Python's version")
                return
            default:
                j += 1
            }
        }
        if j < words.count {
            if words[j].staticValue != "-" { read(words[j]) }
            raise(.execute, "runs the Python script \(words[j].source)")
            pathLikeArguments(words[(j + 1)...])
        } else {
            raise(.execute, "runs Python")
        }
    }

    mutating func judgePythonModule(_ module: String, _ rest: [ShellWord]) {
        switch module {
        case "pip":
            let o = CommandOptions(rest, from: 0, valuedShort: Set("rcet"), valuedLong: ["requirement", "constraint", "editable", "target", "prefix", "root"], stopAtFirstOperand: false)
            lookUp("pip", o.firstOperand.flatMap { rest[$0].staticValue } ?? "")
            if o.hasAny("--user") || o.value("--prefix", "--root", "--target") != nil { raise(.hostExec, "pip installs outside the project's environment") }
        case "venv", "virtualenv":
            write(rest.filter { !($0.staticValue?.hasPrefix("-") ?? false) })
            raise(.write, "creates a virtual environment")
        case "http.server", "SimpleHTTPServer", "smtpd", "ftplib":
            raise(.network, "serves or sends over the network")
        case "json.tool", "tabnanny", "pydoc", "site", "sysconfig", "platform":
            raise(.readOnly, "shows information")
            read(rest.filter { !($0.staticValue?.hasPrefix("-") ?? false) })
        case "twine" where rest.first?.staticValue == "upload":
            raise(.network, "uploads packages")
        default:
            raise(.execute, "runs the Python module \(module)")
            pathLikeArguments(rest)
        }
    }

    mutating func judgeDocker(_ program: String) {
        let o = options("Hc", ["host", "context", "config", "log-level", "tlscacert", "tlscert", "tlskey"])
        if o.value("-H", "--host") != nil { raise(.network, "\(program) talks to a remote daemon") }
        var (sub, next) = subcommand(o)
        if sub == nil, o.hasAny("-v", "--version", "-h", "--help") { sub = "version" }
        if ["image", "container", "volume", "network", "system", "builder", "compose", "buildx", "context", "plugin", "manifest"].contains(sub ?? ""),
            next < c.words.count
        {
            let group = sub!
            var k = next
            while k < c.words.count, c.words[k].staticValue?.hasPrefix("-") ?? false { k += c.words[k].staticValue == "-f" || c.words[k].staticValue == "-p" ? 2 : 1 }
            let inner = k < c.words.count ? c.words[k].staticValue ?? "" : ""
            sub = group == "compose" ? "compose " + inner : (["ls", "list", "inspect", "rm", "prune", "pull", "push", "history"].contains(inner) ? inner : group + " " + inner)
            next = k + 1
        }
        switch sub ?? "" {
        case "pull", "push", "login", "logout", "search", "compose pull", "compose push", "manifest push":
            raise(.network, "\(program) \(sub!) talks to a registry")
        case "ps", "images", "ls", "list", "inspect", "logs", "version", "info", "stats", "top", "port", "diff", "history", "events",
            "compose ps", "compose logs", "compose config", "compose ls", "compose images", "compose top", "system df", "context ls", "--version":
            raise(.readOnly, "shows containers or images")
        case "rm", "rmi", "prune", "system prune", "compose down", "compose rm", "volume rm":
            raise(.destructive, "\(program) \(sub!) deletes containers, images or volumes")
        default:
            raise(.hostExec, "\(program) \(sub ?? "") acts through a daemon that runs as root on the host")
        }
    }
}
