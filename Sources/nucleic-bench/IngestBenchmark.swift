#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol
import NucleicCommandLine

/// `nucleic-bench ingest`: agent stdout bytes to events, against Python's `json.loads`.
enum IngestBenchmark: BenchCommand {
    static let name = "ingest"
    static let summary = "generated Claude stream-json through LineFramer + ClaudeCodec, vs Python json.loads and orjson"
    static let usage = """
        usage: nucleic-bench ingest [--size MB] [--repeat N] [--seed N] [--python PATH | --no-python]
                                    [--orjson PATH | --no-orjson] [--script FILE]
                                    [--keep FILE | --input FILE] [--only ROWS] [--mix]

        Generates Claude Code stream-json from a seed (big tool results, many small stream_event
        partials, assistant tool_use messages, tool_result blocks, control requests), writes it to a
        temporary file, and times, best of N passes each:
          LineFramer                framing alone, fed 64 KiB reads
          JSONParser.parse          the parser alone, on each line (no codec)
          LineFramer + ClaudeCodec  the ingest path: bytes in, AgentEvents out
          python json.loads         Tests/Peers/bench_json.py on the same file, in the same run
          python orjson.loads       the same script with orjson (C + SIMD), when it is installed
        and prints MB/s (10^6 bytes), lines/s, events/s and each row's ratio to Python and to
        orjson. The rows take turns, N rounds, so that load from elsewhere falls on all of them
        alike.

        Options:
          --size MB        stream size in megabytes (default 64; at least 1)
          --repeat N       rounds, each row's best pass kept (default 5)
          --seed N         generator seed (default 1): the same seed gives the same bytes
          --python PATH    the interpreter for the reference row (default python3)
          --no-python      skip the json.loads row
          --orjson PATH    the interpreter for the orjson row (default $NUCLEIC_PEERS_PYTHON, the
                           test virtualenv of scripts/peers.sh, else the --python one); the row
                           is left out, with a note, when orjson cannot be imported there
          --no-orjson      skip the orjson row
          --script FILE    the reference script (default Tests/Peers/bench_json.py)
          --keep FILE      write the stream to FILE and keep it (default: a temporary file, removed)
          --input FILE     measure FILE instead (what a Claude agent wrote on stdout, one message a
                           line; not a fixture, whose lines are wrapped in records)
          --only ROWS      run only these rows, comma-separated: frame,parse,ingest,python,orjson
          --mix            also print the generated mix: lines and bytes per kind of line
        """

    /// The timed rows, in the order they run in each round and print.
    enum Row: String, CaseIterable {
        case frame, parse, ingest, python, orjson
    }

    struct Options {
        var megabytes = 64
        var repeats = 5
        var seed = 1
        var python = "python3"
        var orjsonPython: String?
        var script: String?
        var keep: String?
        var input: String?
        var rows = Set(Row.allCases)
        var mix = false

        init(_ arguments: [String]) throws {
            let args = try ArgumentParser(arguments, valued: ["size", "repeat", "seed", "python", "orjson", "script", "keep", "input", "only"],
                                          boolean: ["no-python", "no-orjson", "mix"], short: [:], allowsPositionals: false, usage: usage)
            megabytes = try args.integer("size", default: megabytes, in: 1...4096, usage: usage)
            repeats = try args.integer("repeat", default: repeats, in: 1...100, usage: usage)
            seed = try args.integer("seed", default: seed, in: 0...Int.max, usage: usage)
            python = args["python"] ?? python
            keep = args["keep"]
            input = args["input"]
            mix = args.flag("mix")
            if let list = args["only"] {
                let names = list.split(separator: ",").map(String.init)
                guard !names.isEmpty, names.allSatisfy({ Row(rawValue: $0) != nil }) else {
                    throw UsageError(message: "--only takes rows from frame,parse,ingest,python,orjson, not '\(list)'", usage: usage)
                }
                rows = Set(names.compactMap(Row.init(rawValue:)))
            }
            if args.flag("no-python") {
                guard args["python"] == nil, args["script"] == nil else {
                    throw UsageError(message: "--no-python excludes --python and --script", usage: usage)
                }
                rows.remove(.python)
            }
            if args.flag("no-orjson") {
                guard args["orjson"] == nil else { throw UsageError(message: "--no-orjson excludes --orjson", usage: usage) }
                rows.remove(.orjson)
            }
            if rows.contains(.orjson) {
                let candidate = args["orjson"] ?? getenv("NUCLEIC_PEERS_PYTHON").map { String(cString: $0) } ?? python
                if PythonPeer.hasOrjson(python: candidate) {
                    orjsonPython = candidate
                } else {
                    Output.standardError("note: orjson cannot be imported by \(candidate): the orjson row is left out (eval \"$(scripts/peers.sh)\" installs it)")
                    rows.remove(.orjson)
                }
            }
            if input != nil, args["size"] != nil || args["seed"] != nil || keep != nil || mix {
                throw UsageError(message: "--input excludes --size, --seed, --keep and --mix", usage: usage)
            }
            if rows.contains(.python) || rows.contains(.orjson) {
                guard let found = args["script"] ?? PythonPeer.defaultScript() else {
                    throw BenchError(message: "cannot find Tests/Peers/bench_json.py: run from the package root, give --script FILE, or --no-python")
                }
                script = found
            }
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments)

        // The stream, in memory and in a file for Python.
        let stream: [UInt8]
        let file: String
        if let input = options.input {
            stream = try Files.read(input)
            file = input
        } else {
            let started = monotonicSeconds()
            let generated = ClaudeStreamGenerator.generate(targetBytes: options.megabytes * 1_000_000, seed: UInt64(options.seed))
            stream = generated.stream
            let seconds = Format.fixed(monotonicSeconds() - started, 1)
            Output.standardError("generated \(Format.fixed(Double(stream.count) / 1e6, 1)) MB (seed \(options.seed)) in \(seconds) s")
            if options.mix { Output.standardOutput(mixTable(generated.mix, total: stream.count) + "\n") }
            file = try options.keep ?? Files.temporary(prefix: "nucleic-bench-ingest", suffix: ".jsonl")
            try Files.write(stream, to: file)
        }
        defer { if options.input == nil, options.keep == nil { unlink(file) } }
        let lines = lineRanges(stream)

        // Rounds interleave the rows (Python included) so that load from elsewhere on the machine
        // falls on all of them alike; each row keeps its best pass.
        var best: [Row: Measurement.Best] = [:]
        var pythonVersion = "?"
        var orjsonVersion = "?"
        for _ in 0..<options.repeats {
            for row in Row.allCases where options.rows.contains(row) {
                switch row {
                case .frame: best[row, default: .init()].add(frameOnly(stream))
                case .parse: best[row, default: .init()].add(parseLines(stream, lines))
                case .ingest: best[row, default: .init()].add(ingestThroughCodec(stream))
                case .python, .orjson:
                    let orjson = row == .orjson
                    let report = try PythonPeer.run(python: orjson ? options.orjsonPython! : options.python, script: options.script!,
                                                    file: file, repeats: 1, loader: orjson ? "orjson" : "json")
                    guard report.measurement.bytes == stream.count, report.measurement.lines == lines.count else {
                        let (bytes, count) = (report.measurement.bytes, report.measurement.lines)
                        throw BenchError(message: "\(options.script!) read \(bytes) bytes in \(count) lines, not \(stream.count) in \(lines.count)")
                    }
                    best[row, default: .init()].add(report.measurement)
                    if orjson { orjsonVersion = report.version } else { pythonVersion = report.version }
                }
            }
        }

        let source = options.input.map { " from \($0)" } ?? ""
        let events = best[.ingest]?.best?.events.map { ", \($0) events" } ?? ""
        Output.standardOutput("""
            ingest: \(Format.fixed(Double(stream.count) / 1e6, 1)) MB of Claude stream-json\(source), \(lines.count) lines\(events); best of \(options.repeats)

            \(table(best, pythonVersion: pythonVersion, orjsonVersion: orjsonVersion))

            """)
        if let summary = summary(best) { Output.standardOutput(summary) }
        return 0
    }

    static func table(_ best: [Row: Measurement.Best], pythonVersion: String, orjsonVersion: String) -> String {
        let reference = best[.python]?.best?.megabytesPerSecond
        let orjson = best[.orjson]?.best?.megabytesPerSecond
        var rows = [["", "MB/s", "lines/s", "events/s", "vs python"] + (orjson == nil ? [] : ["vs orjson"])]
        for row in Row.allCases {
            guard let m = best[row]?.best else { continue }
            let label = switch row {
            case .frame: "LineFramer (64 KiB reads)"
            case .parse: "JSONParser.parse per line"
            case .ingest: "LineFramer + ClaudeCodec"
            case .python: "python \(pythonVersion) json.loads per line"
            case .orjson: "orjson \(orjsonVersion) loads per line"
            }
            rows.append([label, Format.fixed(m.megabytesPerSecond, 1), Format.count(m.linesPerSecond),
                         m.eventsPerSecond.map(Format.count) ?? "-",
                         reference.map { Format.fixed(m.megabytesPerSecond / $0, 2) + "x" } ?? "-"]
                        + (orjson.map { [Format.fixed(m.megabytesPerSecond / $0, 2) + "x"] } ?? []))
        }
        return Format.table(rows)
    }

    /// `ingest: nucleic 161.2 MB/s (1.2M events/s) vs python json.loads 70.4 MB/s = 2.29x`
    static func summary(_ best: [Row: Measurement.Best]) -> String? {
        guard let nucleic = best[.ingest]?.best else { return nil }
        var line = "ingest: nucleic \(Format.fixed(nucleic.megabytesPerSecond, 1)) MB/s (\(Format.count(nucleic.eventsPerSecond ?? 0)) events/s)"
        if let python = best[.python]?.best {
            let ratio = nucleic.megabytesPerSecond / python.megabytesPerSecond
            line += " vs python json.loads \(Format.fixed(python.megabytesPerSecond, 1)) MB/s = \(Format.fixed(ratio, 2))x"
        }
        if let orjson = best[.orjson]?.best {
            let ratio = nucleic.megabytesPerSecond / orjson.megabytesPerSecond
            line += ", vs orjson \(Format.fixed(orjson.megabytesPerSecond, 1)) MB/s = \(Format.fixed(ratio, 2))x"
        }
        return line
    }

    /// Lines and bytes per kind of line, largest share first.
    static func mixTable(_ mix: ClaudeStreamGenerator.Mix, total: Int) -> String {
        let totalLines = mix.lines.values.reduce(0, +)
        var rows = [["line kind", "lines", "% lines", "% bytes", "avg bytes"]]
        for kind in mix.bytes.keys.sorted(by: { mix.bytes[$0]! > mix.bytes[$1]! }) {
            let lines = mix.lines[kind]!, bytes = mix.bytes[kind]!
            rows.append([kind, String(lines), Format.fixed(100 * Double(lines) / Double(totalLines), 1),
                         Format.fixed(100 * Double(bytes) / Double(total), 1), String(bytes / lines)])
        }
        return Format.table(rows)
    }
}
