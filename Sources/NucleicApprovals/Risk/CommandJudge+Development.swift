import NucleicProtocol

/// Build tools, compilers, test runners, interpreters and containers: they run project code.
extension CommandJudge {
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
