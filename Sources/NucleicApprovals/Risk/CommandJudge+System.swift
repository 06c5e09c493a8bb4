import NucleicProtocol

/// System administration and network clients: what reaches the machine or another one.
extension CommandJudge {
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
}
