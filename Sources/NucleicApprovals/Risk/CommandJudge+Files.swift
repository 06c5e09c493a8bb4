import NucleicProtocol

/// Programs that read, write, move, archive and search files: `readers` and `writers` are
/// tables (a program's valued options and how its operands are used); the rest have a case each.
extension CommandJudge {
    /// Reading programs: (short options with values, long options with values, first operand is
    /// a pattern or program, no operand means the working folder).
    static let readers: [String: (String, Set<String>, Bool, Bool)] = [
        "ls": ("ITw", ["ignore", "hide", "width", "tabsize", "format", "sort", "time-style", "block-size", "quoting-style", "indicator-style", "time"], false, true),
        "dir": ("ITw", [], false, true), "vdir": ("ITw", [], false, true),
        "cat": ("", [], false, false), "tac": ("s", ["separator"], false, false), "nl": ("bdfhilnsvw", [], false, false),
        "head": ("nc", ["lines", "bytes"], false, false), "tail": ("ncs", ["lines", "bytes", "pid", "sleep-interval", "max-unchanged-stats"], false, false),
        "wc": ("", ["files0-from"], false, false), "less": ("bhjkoOpPtTxyz", [], false, false), "more": ("n", [], false, false),
        "file": ("mfFe", ["magic-file", "files-from", "separator", "exclude", "exclude-quiet"], false, false),
        "stat": ("c", ["format", "printf"], false, false), "md5sum": ("", [], false, false), "sha1sum": ("", [], false, false),
        "sha224sum": ("", [], false, false), "sha256sum": ("", [], false, false), "sha384sum": ("", [], false, false),
        "sha512sum": ("", [], false, false), "b2sum": ("l", ["length"], false, false), "cksum": ("a", ["algorithm"], false, false),
        "sum": ("", [], false, false), "shasum": ("a", ["algorithm"], false, false), "md5": ("s", [], false, false),
        "strings": ("nteTo", ["bytes", "radix", "encoding", "target"], false, false), "od": ("AjNtwS", ["address-radix", "skip-bytes", "read-bytes", "format", "width", "strings"], false, false),
        "hexdump": ("nsef", [], false, false), "hd": ("nsef", [], false, false), "base64": ("w", ["wrap"], false, false), "base32": ("w", ["wrap"], false, false),
        "cmp": ("in", ["ignore-initial", "bytes"], false, false), "diff": ("UCxXIFLDS", ["label", "exclude", "exclude-from", "ignore-matching-lines", "unified", "context", "from-file", "to-file", "width", "line-format", "starting-file", "color", "palette", "tabsize", "horizon-lines", "show-function-line"], false, false),
        "comm": ("", ["output-delimiter"], false, false), "cut": ("dfbc", ["delimiter", "fields", "bytes", "characters", "output-delimiter"], false, false),
        "paste": ("d", ["delimiters"], false, false), "fold": ("w", ["width"], false, false), "fmt": ("wgp", ["width", "goal", "prefix"], false, false),
        "column": ("scoNWHlRJd", ["separator", "output-separator", "table-columns", "table-hide", "table-right", "table-wrap", "table-name"], false, false),
        "expand": ("t", ["tabs"], false, false), "unexpand": ("t", ["tabs"], false, false), "rev": ("", [], false, false),
        "zcat": ("", [], false, false), "zless": ("", [], false, false), "bzcat": ("", [], false, false), "xzcat": ("", [], false, false),
        "zstdcat": ("", [], false, false), "lzcat": ("", [], false, false), "realpath": ("", ["relative-to", "relative-base"], false, false),
        "readlink": ("", [], false, false), "du": ("dBtX", ["max-depth", "exclude", "block-size", "threshold", "files0-from", "time-style", "exclude-from"], false, true),
        "df": ("tBx", ["type", "block-size", "exclude-type", "output"], false, false), "look": ("t", [], false, false),
        "tr": ("", [], false, false), "uniq": ("fsw", ["skip-fields", "skip-chars", "check-chars", "group", "all-repeated"], false, false),
        "join": ("tjeo12", [], false, false), "iconv": ("ft", ["from-code", "to-code"], false, false), "jq": ("L", ["indent", "arg", "argjson", "slurpfile", "rawfile"], true, false),
        "grep": ("efmABCdD", ["regexp", "file", "max-count", "after-context", "before-context", "context", "directories", "devices", "include", "exclude", "exclude-dir", "exclude-from", "label", "color", "colour", "binary-files", "group-separator"], true, false),
        "egrep": ("efmABCdD", ["regexp", "file", "max-count", "after-context", "before-context", "context", "include", "exclude", "exclude-dir", "color", "colour"], true, false),
        "fgrep": ("efmABCdD", ["regexp", "file", "max-count", "after-context", "before-context", "context", "include", "exclude", "exclude-dir", "color", "colour"], true, false),
        "zgrep": ("efmABC", ["regexp", "file"], true, false),
        "rg": ("efgmABCjMEtTrd", ["regexp", "file", "glob", "iglob", "max-count", "after-context", "before-context", "context", "threads", "max-columns", "encoding", "type", "type-not", "replace", "max-depth", "ignore-file", "pre-glob", "sort", "sortr", "type-add", "color", "colors", "path-separator", "max-filesize", "engine", "dfa-size-limit", "regex-size-limit", "context-separator", "field-match-separator", "field-context-separator", "hostname-bin"], true, true),
        "ag": ("ABCGgmp", ["after", "before", "context", "file-search-regex", "ignore", "ignore-dir", "max-count", "path-to-ignore", "depth", "color-match"], true, true),
        "ack": ("ABCm", ["after-context", "before-context", "context", "max-count", "type", "ignore-dir", "ignore-file"], true, true),
        "tree": ("LPI", ["filelimit", "charset", "sort", "timefmt"], false, true),
        "awk": ("vF", ["assign", "field-separator"], true, false), "gawk": ("vF", ["assign", "field-separator"], true, false),
        "mawk": ("vF", [], true, false), "nawk": ("vF", [], true, false),
    ]

    /// Programs that write the files they name (all operands).
    static let writers: [String: (String, Set<String>, String)] = [
        "touch": ("rdt", ["reference", "date", "time"], "creates or touches"),
        "mkdir": ("m", ["mode", "context"], "creates the folder"),
        "rmdir": ("", [], "removes the empty folder"),
        "unlink": ("", [], "removes"),
        "tee": ("", ["output-error"], "writes"),
        "mv": ("tS", ["target-directory", "suffix", "backup"], "moves"),
        "dos2unix": ("", [], "rewrites"), "unix2dos": ("", [], "rewrites"),
        "vim": ("cSTiuUws", [], "edits"), "vi": ("cSTiuUws", [], "edits"), "nvim": ("cSiuUw", [], "edits"), "nano": ("", [], "edits"),
        "emacs": ("", [], "edits"), "ed": ("p", [], "edits"), "ex": ("c", [], "edits"), "micro": ("", [], "edits"), "pico": ("", [], "edits"),
    ]

    /// Programs that change disks or file systems: destructive whatever their arguments.
    static let diskTools: Set<String> = [
        "mkfs", "mke2fs", "mkswap", "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs", "blkdiscard", "cryptsetup",
        "mdadm", "lvremove", "vgremove", "pvremove", "hdparm", "fsck", "e2fsck", "tune2fs", "badblocks", "zpool",
    ]

    /// Compressors: in place unless they write to stdout or only list or test.
    static let compressors: Set<String> = [
        "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd", "unzstd", "lz4", "compress", "uncompress", "pigz", "brotli",
    ]

    mutating func judgeFiles(_ program: String) -> Bool {
        switch program {
        case "sed": judgeSed()
        case "awk", "gawk", "mawk", "nawk": judgeAwk()
        case "find": judgeFind()
        case "fd", "fdfind": judgeFd()
        case "cp", "install": judgeCopy(program)
        case "ln":
            let o = options("tS", ["target-directory", "suffix", "backup"])
            let symbolic = o.hasAny("-s", "--symbolic")
            var operands = o.operands
            if let target = o.value("-t", "--target-directory") {
                write(target)
            } else if operands.count >= 2 {
                write(operands.removeLast())
            } else {
                accessCwd(.write)
            }
            // A hard link shares the file: writing it later writes the original.
            if !symbolic { write(operands) }
            raise(.write, symbolic ? "creates a symbolic link" : "creates a hard link")
        case "rm":
            let o = options("", ["interactive"])
            let recursive = o.hasAny("-r", "-R", "--recursive")
            write(o.operands)
            extraArguments(.write)
            if recursive {
                raise(.destructive, "deletes \(o.operands.map(\.source).joined(separator: " ").nonEmpty ?? "files") recursively")
            } else {
                raise(.write, "deletes files")
            }
            if o.hasAny("--no-preserve-root") { raise(.destructive, "may delete /") }
        case "chmod", "chown", "chgrp":
            let o = options("", ["reference", "from"])
            if o.hasAny("-R", "--recursive") { raise(.destructive, "\(program) -R changes a whole tree") }
            var operands = c.words.dropFirst().filter { w in
                guard let v = w.staticValue else { return true }
                return !(v.hasPrefix("--") || ["-R", "-c", "-f", "-v", "-h", "-H", "-L", "-P"].contains(v))
            }
            if o.value("--reference") == nil, !operands.isEmpty { operands.removeFirst() }  // the mode or owner
            write(operands)
            extraArguments(.write)
            raise(.write, "changes \(program == "chmod" ? "permissions" : "ownership")")
        case "truncate": raise(.destructive, "cuts files to a size, losing their content"); write(options("sr", ["size", "reference"]).operands)
        case "shred": raise(.destructive, "overwrites files so they cannot be recovered"); write(options("ns", ["iterations", "size", "random-source"]).operands)
        case "dd": raise(.destructive, "copies raw blocks (dd can overwrite disks)")
            for arg in args {
                guard let v = arg.staticValue else { continue }
                if v.hasPrefix("of=") { write(.literal(String(v.dropFirst(3)))) }
                if v.hasPrefix("if=") { read(.literal(String(v.dropFirst(3)))) }
            }
        case _ where Self.diskTools.contains(program):
            raise(.destructive, "\(program) changes disks or file systems")
        case "tar": judgeTar()
        case "unzip":
            let o = options("dxXP", [])
            if o.hasAny("-l", "-v", "-t", "-Z", "-z", "-p", "-c") {
                read(o.operands.first)
                raise(.readOnly, "lists or prints an archive")
            } else {
                read(o.operands.first)
                if let dir = o.value("-d") { write(dir) } else { accessCwd(.write) }
                raise(.write, "extracts an archive")
            }
        case "zip":
            let o = options("bntxiP", ["temp-path", "exclude", "include", "password"])
            if o.hasAny("-T", "--test", "--unzip-command", "-TT") { raise(.execute, "zip runs a test command") }
            var operands = o.operands
            if !operands.isEmpty { write(operands.removeFirst()) }
            if o.hasAny("-m", "--move") { write(operands) } else { read(operands) }
            raise(.write, "writes an archive")
        case _ where Self.compressors.contains(program):
            let o = options("bSoT#", ["suffix", "output", "threads"])
            if o.hasAny("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test") {
                read(o.operands)
                raise(.readOnly, "reads compressed files")
            } else {
                write(o.operands)
                write(o.value("-o", "--output"))
                raise(.write, "compresses or decompresses files in place")
            }
        case "7z", "7za", "7zr":
            let (sub, _) = subcommand(options())
            if sub == "l" || sub == "t" { raise(.readOnly, "lists an archive") } else {
                accessCwd(.write)
                raise(.write, "writes an archive or its files")
            }
            read(Array(options().operands.dropFirst()))
        case "patch":
            let o = options("pdioBrDFVYzx", ["strip", "directory", "input", "output", "prefix", "reject-file", "ifdef", "fuzz", "version-control", "basename-prefix", "suffix"])
            read(o.value("-i", "--input"))
            write(o.value("-o", "--output"))
            write(o.value("-r", "--reject-file"))
            let operands = o.operands
            if let file = operands.first { write(file) } else if let dir = o.value("-d", "--directory") { write(dir) } else { accessCwd(.write) }
            if operands.count > 1 { read(operands[1]) }
            raise(.write, "applies a patch")
        case "split", "csplit":
            let o = options("lbCnatf", ["lines", "bytes", "line-bytes", "number", "suffix-length", "additional-suffix", "separator", "prefix", "filter"])
            if o.value("--filter") != nil { raise(.execute, "split runs a filter command") }
            let operands = o.operands
            read(operands.first)
            if operands.count > 1 { write(operands[1]) } else { accessCwd(.write) }
            raise(.write, "writes pieces of a file")
        case "sort":
            let o = options("ktSTo", ["key", "field-separator", "buffer-size", "temporary-directory", "output", "files0-from", "parallel", "batch-size", "compress-program"])
            if o.value("--compress-program") != nil { raise(.execute, "sort runs a compression program") }
            read(o.operands)
            read(o.value("--files0-from"))
            extraArguments(.read)
            if let output = o.value("-o", "--output") { write(output) }
            raise(.readOnly, "sorts lines")
        case "uniq", "xxd":
            let o = program == "uniq" ? options("fsw", ["skip-fields", "skip-chars", "check-chars", "group", "all-repeated"]) : options("cglsonC", ["cols", "groupsize", "len", "seek", "name"])
            let operands = o.operands
            read(operands.first)
            if operands.count > 1 { write(operands[1]) }
            raise(.readOnly, program == "uniq" ? "filters repeated lines" : "prints a hex dump")
        case "tree":
            let o = options("LPIo", ["filelimit", "charset", "sort", "timefmt"])
            if let out = o.value("-o") { write(out) }
            read(o.operands)
            if o.operands.isEmpty { accessCwd(.read) }
            raise(.readOnly, "lists files")
        case "yq":
            let o = options("poIe", ["input-format", "output-format", "indent", "expression", "from-file"])
            var operands = o.operands
            if o.value("-e", "--expression", "--from-file") == nil, !operands.isEmpty { operands.removeFirst() }
            if o.hasAny("-i", "--inplace") {
                write(operands)
                raise(.write, "edits files in place")
            } else {
                read(operands)
                raise(.readOnly, "reads structured files")
            }
        case "jq":
            judgeJq()
        case "mktemp":
            let o = options("p", ["tmpdir", "suffix"])
            if let dir = o.value("-p", "--tmpdir") { write(dir) }
            if let template = o.operands.first, template.staticValue?.contains("/") ?? true { write(template) }
            raise(.write, "creates a temporary file")
        case "rg":
            let o = options(Self.readers["rg"]!.0, Self.readers["rg"]!.1)
            if o.value("--pre") != nil { raise(.execute, "rg --pre runs a program on every file") }
            judgeReader("rg", o)
        default:
            if let (short, long, _, _) = Self.readers[program] {
                judgeReader(program, options(short, long))
            } else if let (short, long, verb) = Self.writers[program] {
                let o = options(short, long)
                if program == "touch" { read(o.value("-r", "--reference")) }
                if program == "mv", let target = o.value("-t", "--target-directory") { write(target) }
                write(o.operands)
                extraArguments(.write)
                raise(.readOnly, verb + " files")  // the risk comes from where it writes
            } else {
                return false
            }
        }
        return true
    }

    /// A reading program: operands are files (after the pattern or program, if it takes one).
    mutating func judgeReader(_ program: String, _ o: CommandOptions) {
        let (_, _, patternFirst, cwdByDefault) = Self.readers[program]!
        var operands = o.operands
        if patternFirst {
            let given = o.hasAny("-e", "--regexp", "-f", "--file", "--files", "--type-list", "--from-file")
            if !given, !operands.isEmpty { operands.removeFirst() }
            read(o.values("-f", "--file", "--from-file"))
        }
        if ["awk", "gawk", "mawk", "nawk"].contains(program) { operands = operands.filter { !($0.staticValue?.contains("=") ?? false) } }
        read(operands)
        extraArguments(.read)
        let recursive = o.hasAny("-r", "-R", "--recursive", "--dereference-recursive") || cwdByDefault || program == "rgrep"
        if operands.isEmpty, recursive, !c.acceptsExtraArguments { accessCwd(.read) }
        raise(.readOnly, ["ls", "dir", "vdir", "tree", "du"].contains(program) ? "lists files" : patternFirst ? "searches files" : "reads files")
        output = ((o.hasAny("-l", "-L", "--files-with-matches", "--files-without-match", "--files") && patternFirst) || program == "ls")
            ? listedSource() : nil
    }

    /// Where the files this command listed are: inside if every path it read was.
    func listedSource() -> ArgumentSource {
        if let outside = accesses.first(where: { !$0.location.isInsideWorktree }) {
            return outside.location == .unknown ? .unknown("a listing of \(outside.written)") : .outside(outside.resolved ?? outside.written)
        }
        return .inside
    }

    mutating func judgeCopy(_ program: String) {
        let o = options(program == "install" ? "gmoStT" : "tS", ["target-directory", "suffix", "backup", "reflink", "sparse", "preserve", "no-preserve", "context", "mode", "owner", "group"])
        var operands = o.operands
        if program == "install", o.hasAny("-d", "--directory") {
            write(operands)
            raise(.write, "creates folders")
            return
        }
        if let target = o.value("-t", "--target-directory") {
            write(target)
        } else if operands.count >= 2 {
            write(operands.removeLast())
        }
        // Hard links share the source file: a later write through the copy writes the source.
        if o.hasAny("-l", "--link") { write(operands) } else { read(operands) }
        extraArguments(.read)
        raise(.write, "copies files")
    }

    mutating func judgeFind() {
        let words = c.words
        var j = 1
        var follows = false
        while j < words.count, let v = words[j].staticValue, ["-H", "-L", "-P", "-D", "-O"].contains(v) || v.hasPrefix("-O") {
            if v == "-L" { follows = true }
            j += v == "-D" ? 2 : 1
        }
        var roots: [ShellWord] = []
        while j < words.count {
            if let v = words[j].staticValue, v.hasPrefix("-") || v == "(" || v == "!" || v == "," { break }
            roots.append(words[j])
            j += 1
        }
        if roots.isEmpty { accessCwd(.read) } else { read(roots) }
        listedFiles = follows ? .unknown("files found through symbolic links") : listedSource()
        output = listedFiles
        var inExec = false
        while j < words.count {
            let v = words[j].staticValue ?? ""
            if inExec {
                if v == ";" || v == "+" { inExec = false }
                j += 1
                continue
            }
            switch v {
            case "-exec", "-execdir", "-ok", "-okdir": inExec = true
            case "-delete": raise(.destructive, "deletes every file it finds")
            case "-fprint", "-fprint0", "-fls", "-fprintf":
                if j + 1 < words.count { write(words[j + 1]) }
            case "-newer", "-anewer", "-cnewer", "-samefile", "-files0-from":
                if j + 1 < words.count { read(words[j + 1]) }
            default: break
            }
            j += 1
        }
        raise(.readOnly, "finds files")
    }

    mutating func judgeFd() {
        // fd [options] [pattern] [path…]; `-x`/`-X` start the command it runs (judged on its own).
        var words = c.words
        if let exec = words.firstIndex(where: { ["-x", "--exec", "-X", "--exec-batch"].contains($0.staticValue ?? "") }) {
            words = Array(words[..<exec])
        }
        let o = CommandOptions(words, from: 1, valuedShort: Set("etdEScjo"),
                               valuedLong: ["extension", "type", "max-depth", "min-depth", "exclude", "size", "color", "threads", "changed-within", "changed-before", "owner", "max-results", "ignore-file", "path-separator", "base-directory", "search-path", "format"],
                               stopAtFirstOperand: false)
        let searchPaths = Array(o.operands.dropFirst()) + o.values("--search-path")
        if let base = o.value("--base-directory") { read(base) }
        if searchPaths.isEmpty { accessCwd(.read) } else { read(searchPaths) }
        listedFiles = o.hasAny("-L", "--follow") ? .unknown("files found through symbolic links") : listedSource()
        output = listedFiles
        raise(.readOnly, "finds files")
    }

    mutating func judgeTar() {
        let words = c.words
        var valueWords: [ShellWord] = []
        var o: CommandOptions
        if let first = words.dropFirst().first?.staticValue, !first.hasPrefix("-"), first.allSatisfy(\.isLetter) {
            // Old style: `tar xzf a.tgz -C dir`: the letters' values follow in order.
            var j = 2
            for letter in first where "fCTXbgKLNV".contains(letter) {
                if j < words.count { valueWords.append(words[j]) }
                j += 1
            }
            o = CommandOptions(words, from: j, valuedShort: Set("fCTXbgKLNVI"), valuedLong: Self.tarValued, stopAtFirstOperand: false)
            var k = 0
            for letter in first where "fCTXbgKLNV".contains(letter) {
                if k < valueWords.count { o.options.append(("-" + String(letter), valueWords[k])) }
                k += 1
            }
            o.options = first.filter { !"fCTXbgKLNV".contains($0) }.map { ("-" + String($0), nil) } + o.options
        } else {
            o = CommandOptions(words, from: 1, valuedShort: Set("fCTXbgKLNVI"), valuedLong: Self.tarValued, stopAtFirstOperand: false)
        }
        let archive = o.value("-f", "--file")
        let dir = o.value("-C", "--directory")
        if o.hasAny("-P", "--absolute-names") { raise(.hostExec, "tar -P reads or writes absolute paths") }
        if o.value("--to-command", "-I", "--use-compress-program", "--checkpoint-action", "--rsh-command", "--info-script", "--new-volume-script") != nil
            || o.hasAny("-F")
        {
            raise(.execute, "tar runs a helper program")
        }
        func has(_ short: String, _ long: String...) -> Bool { o.hasAny(["-" + short] + long.map { "--" + $0 }) }
        var operandCwd: ShellState.Cwd = cwd
        if let dir { operandCwd = Self.directories(dir, from: state, paths: paths) }
        if has("c", "create") || has("r", "append") || has("u", "update") || has("A", "catenate", "concatenate") || o.hasAny("--delete") {
            if let archive, archive.staticValue != "-" { write(archive) }
            var reader = CommandJudge(c: c, paths: paths, state: ShellState(cwd: operandCwd, vars: state.vars), ctx: ctx)
            reader.read(o.operands)
            accesses += reader.accesses
            for (r, reason) in reader.reasons { raise(r, reason) }
            if o.hasAny("--remove-files") { raise(.write, "tar --remove-files deletes what it archived") }
            raise(.write, "writes an archive")
        } else if has("x", "extract", "get") {
            if let archive, archive.staticValue != "-" { read(archive) }
            if let dir { write(dir) } else { accessCwd(.write) }
            raise(.write, "extracts an archive")
        } else if has("t", "list") || has("d", "diff", "compare") {
            if let archive, archive.staticValue != "-" { read(archive) }
            raise(.readOnly, "lists an archive")
        } else {
            raise(.execute, "tar with no mode Nucleic recognizes")
        }
    }

    static let tarValued: Set<String> = [
        "file", "directory", "files-from", "exclude-from", "to-command", "use-compress-program", "checkpoint-action", "newer", "index-file",
        "transform", "exclude", "rsh-command", "info-script", "new-volume-script", "owner", "group", "mode", "mtime", "format", "blocking-factor",
    ]
}

extension CommandOptions {
    func hasAny(_ names: [String]) -> Bool { options.contains { names.contains($0.name) } }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
