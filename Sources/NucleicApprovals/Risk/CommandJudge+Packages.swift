import NucleicProtocol

/// Package managers and language version managers: installing talks to the registry (network),
/// running scripts is execute, global setups are hostExec; subcommands not in a table fall back
/// to the manager's own default.
extension CommandJudge {
    /// System package managers of other platforms and language version managers: listing is
    /// readOnly, removing hostExec, anything else installs or downloads (network).
    static let softwareManagers: Set<String> = [
        "snap", "flatpak", "port", "nix-env", "nix", "nix-shell", "nix-build", "emerge", "xbps-install", "pkg", "choco", "winget", "scoop",
        "sdkmanager", "rustup", "asdf", "mise", "nvm", "pyenv", "rbenv", "volta", "fnm", "sdk", "swiftly", "juliaup", "ghcup", "opam",
    ]

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
        case _ where Self.softwareManagers.contains(program):
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
}
