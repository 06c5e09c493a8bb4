#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol
import NucleicSystem

/// Runs `Tests/Peers/bench_json.py` on the same bytes, for the reference row.
///
/// A `Spawn` child with its stderr on the benchmark's.
enum PythonPeer {
    struct Report {
        var measurement: Measurement
        var version: String
    }

    /// The script next to the sources: found from the working directory (`swift run` runs in the
    /// package root) or, failing that, from this source file's path.
    static func defaultScript() -> String? {
        let relative = "Tests/Peers/bench_json.py"
        if access(relative, R_OK) == 0 { return relative }
        let source = #filePath  // <root>/Sources/nucleic-bench/PythonPeer.swift
        var parts = source.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count > 3 else { return nil }
        parts.removeLast(3)
        let path = parts.joined(separator: "/") + "/" + relative
        return access(path, R_OK) == 0 ? path : nil
    }

    /// Whether `python` can import orjson (asked without importing it, so nothing is printed).
    static func hasOrjson(python: String) -> Bool {
        let probe = "import importlib.util; print(importlib.util.find_spec('orjson') is not None)"
        guard let output = try? capture([python, "-c", probe]) else { return false }
        return String(decoding: output, as: UTF8.self).hasPrefix("True")
    }

    /// Runs the script with `loader` (`json` or `orjson`); `version` is Python's for `json`, orjson's
    /// for `orjson`.
    static func run(python: String, script: String, file: String, repeats: Int, loader: String = "json") throws(BenchError) -> Report {
        let output = try capture([python, script, file, "--repeat", String(repeats), "--loader", loader])
        guard let report = try? JSONParser.parse(output),
            let seconds = report["seconds"]?.doubleValue, let bytes = report["bytes"]?.intValue, let lines = report["lines"]?.intValue
        else {
            throw BenchError(message: "\(script) printed something other than its JSON report: \(Preview.text(output))")
        }
        return Report(measurement: Measurement(seconds: seconds, bytes: Int(bytes), lines: Int(lines), events: nil),
                      version: (loader == "json" ? report["python"] : report["version"])?.stringValue ?? "?")
    }

    /// Runs `argv` and returns its standard output; a failure to start or a non-zero exit throws.
    private static func capture(_ argv: [String]) throws(BenchError) -> [UInt8] {
        let exit = try Spawn.run(argv, hint: "give another interpreter with --python, or --no-python")
        guard exit.succeeded else {
            throw BenchError(message: "\(argv.joined(separator: " ")) failed (wait status \(exit.status)); its errors are above")
        }
        return exit.output
    }
}
