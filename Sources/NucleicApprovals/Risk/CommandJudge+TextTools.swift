import NucleicProtocol

/// Text tools whose programs can do more than print: sed (`w file`, `e`), awk (`system()`,
/// `print > file`), jq (files named by options).
extension CommandJudge {
    mutating func judgeSed() {
        let o = options("ef", ["expression", "file", "line-length", "separator"])
        let inPlace = o.hasAny("-i", "--in-place") || o.options.contains { $0.name.hasPrefix("--in-place") }
        var operands = o.operands
        var scripts = o.values("-e", "--expression")
        read(o.values("-f", "--file"))
        if scripts.isEmpty, o.values("-f", "--file").isEmpty, !operands.isEmpty { scripts.append(operands.removeFirst()) }
        for script in scripts {
            guard let text = script.staticValue else {
                raise(.unknown, "its sed script is built at run time")
                continue
            }
            let effects = SedScript.effects(text)
            for file in effects.writes { write(.literal(file)) }
            for file in effects.reads { read(.literal(file)) }
            if effects.executes { raise(.unknown, "its sed script runs commands Nucleic cannot see (e)") }
        }
        if inPlace {
            write(operands)
            extraArguments(.write)
            raise(.write, "edits files in place")
        } else {
            read(operands)
            extraArguments(.read)
            raise(.readOnly, "prints edited text")
        }
    }

    mutating func judgeAwk() {
        let o = options("vFfEi", ["assign", "field-separator", "file", "exec", "include", "load"])
        let programFiles = o.values("-f", "--file", "-E", "--exec")
        read(programFiles)
        var operands = o.operands.filter { !($0.staticValue?.contains("=") ?? false) }
        if programFiles.isEmpty, !operands.isEmpty {
            let program = operands.removeFirst()
            if let text = program.staticValue {
                if text.contains("system(") || text.contains("|") || Self.awkPrintsToFile(text) {
                    raise(.unknown, "its awk program runs commands or writes files Nucleic cannot see")
                }
            } else {
                raise(.unknown, "its awk program is built at run time")
            }
        } else if !programFiles.isEmpty {
            raise(.execute, "runs an awk program from a file")
        }
        if o.value("-l", "--load") != nil { raise(.execute, "loads an awk extension") }
        let inPlace = o.values("-i", "--include").contains { $0.staticValue == "inplace" }
        if inPlace { write(operands) } else { read(operands) }
        extraArguments(inPlace ? .write : .read)
        raise(inPlace ? .write : .readOnly, inPlace ? "edits files in place" : "reads files")
    }

    /// `print … > file` (or `>>`) in an awk program: a `>` after `print` in the same statement.
    static func awkPrintsToFile(_ program: String) -> Bool {
        var rest = Substring(program)
        while let p = rest.firstRange(of: "print") {
            let statement = rest[p.upperBound...].prefix { $0 != ";" && $0 != "}" && $0 != "\n" }
            if statement.contains(">") { return true }
            rest = rest[p.upperBound...]
        }
        return false
    }

    mutating func judgeJq() {
        var j = 1
        var filterSeen = false
        let words = c.words
        var files: [ShellWord] = []
        while j < words.count {
            let v = words[j].staticValue
            switch v {
            case "--arg", "--argjson":
                j += 3
                continue
            case "--slurpfile", "--rawfile":
                if j + 2 < words.count { read(words[j + 2]) }
                j += 3
                continue
            case "-f", "--from-file":
                if j + 1 < words.count { read(words[j + 1]) }
                filterSeen = true
                j += 2
                continue
            case "--args", "--jsonargs":
                j = words.count
                continue
            case "-L", "--indent":
                j += 2
                continue
            default:
                if let v, v.hasPrefix("-"), v.count > 1 {
                    j += 1
                    continue
                }
            }
            if filterSeen { files.append(words[j]) } else { filterSeen = true }
            j += 1
        }
        read(files)
        extraArguments(.read)
        raise(.readOnly, "reads JSON")
    }
}

/// What a sed script does besides printing: `w file` and `s///w file` write, `r`/`R file`
/// read, `e` and `s///e` run commands.
enum SedScript {
    static func effects(_ script: String) -> (writes: [String], reads: [String], executes: Bool) {
        var writes: [String] = [], reads: [String] = []
        var executes = false
        let chars = Array(script)
        var i = 0
        func restOfLine() -> String {
            var j = i
            while j < chars.count, chars[j] == " " || chars[j] == "\t" { j += 1 }
            var k = j
            while k < chars.count, chars[k] != "\n" { k += 1 }
            let text = String(chars[j..<k])
            i = k
            return text
        }
        while i < chars.count {
            let ch = chars[i]
            switch ch {
            case " ", "\t", "\n", ";", "{", "}", "!":
                i += 1
            case _ where ch.isNumber || ch == "$" || ch == "," || ch == "~" || ch == "+":
                i += 1
            case "/", "\\":
                // An address: skip the regex.
                let delimiter: Character = ch == "\\" && i + 1 < chars.count ? chars[i + 1] : "/"
                i += ch == "\\" ? 2 : 1
                while i < chars.count, chars[i] != delimiter {
                    if chars[i] == "\\" { i += 1 }
                    i += 1
                }
                i += 1
                while i < chars.count, chars[i] == "I" || chars[i] == "M" { i += 1 }
            case "s", "y":
                guard i + 1 < chars.count else { return (writes, reads, executes) }
                let delimiter = chars[i + 1]
                i += 2
                for _ in 0..<2 {
                    while i < chars.count, chars[i] != delimiter {
                        if chars[i] == "\\" { i += 1 }
                        i += 1
                    }
                    i += 1
                }
                guard ch == "s" else { continue }
                while i < chars.count, "gpiImMe0123456789w".contains(chars[i]) {
                    if chars[i] == "e" { executes = true }
                    if chars[i] == "w" {
                        i += 1
                        writes.append(restOfLine())
                        break
                    }
                    i += 1
                }
            case "w", "W":
                i += 1
                writes.append(restOfLine())
            case "r", "R":
                i += 1
                reads.append(restOfLine())
            case "e":
                executes = true
                i += 1
                _ = restOfLine()
            case "a", "i", "c":
                i += 1
                _ = restOfLine()
            case "b", "t", "T", ":":
                i += 1
                while i < chars.count, chars[i] != ";" && chars[i] != "\n" { i += 1 }
            default:
                i += 1
            }
        }
        return (writes.filter { !$0.isEmpty && $0 != "/dev/stdout" && $0 != "/dev/stderr" }, reads.filter { !$0.isEmpty }, executes)
    }
}
