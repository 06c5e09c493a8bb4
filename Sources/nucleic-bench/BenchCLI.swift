#if canImport(Glibc)
import Glibc
import NucleicSystem
import NucleicCommandLine
#endif

/// One benchmark, run as `nucleic-bench <name> [options]`. A new benchmark is a new conforming
/// type listed in `BenchCLI.commands`; help and usage errors come for free.
protocol BenchCommand {
    static var name: String { get }
    /// One line for the command list.
    static var summary: String { get }
    /// The full help text (`nucleic-bench help <name>`, `<name> --help`).
    static var usage: String { get }
    static func run(_ arguments: [String]) throws -> Int32
}

/// A failure the user can act on: printed as `nucleic-bench: <message>`, exit status 1.
struct BenchError: Error {
    let message: String
}

enum BenchCLI {
    static var commands: [any BenchCommand.Type] { [IngestBenchmark.self, SessionsBenchmark.self, IntegrateBenchmark.self, SyncBenchmark.self, ResubscribeBenchmark.self, ApprovalsBenchmark.self, WatchBenchmark.self] }

    static var usage: String {
        // (Closures, not key paths: a key path through `any BenchCommand.Type` crashes Swift 6.3's SILGen.)
        let entries = commands.map { ($0.name, $0.summary) } + [("help [BENCHMARK]", "show help")]
        let width = entries.map { $0.0.count }.max() ?? 0
        let list = entries.map { "  " + $0.0.padding(to: width) + "   " + $0.1 }.joined(separator: "\n")
        return """
            usage: nucleic-bench <benchmark> [options]

            Throughput benchmarks for Nucleic's hot paths (docs/BENCHMARKS.md). Build with -c release:
              swift run -c release nucleic-bench ingest

            Benchmarks:
            \(list)

            Run `nucleic-bench help BENCHMARK` for a benchmark's options.
            """
    }

    static func run(_ arguments: [String]) -> Int32 {
        guard let name = arguments.first else {
            Output.standardError("nucleic-bench: name a benchmark\n\n\(usage)")
            return 64
        }
        let rest = Array(arguments.dropFirst())
        do {
            if ["help", "--help", "-h"].contains(name) {
                if let topic = rest.first {
                    guard let command = command(topic) else {
                        throw UsageError(message: "no benchmark named '\(topic)'", usage: usage)
                    }
                    Output.standardOutput(command.usage)
                } else {
                    Output.standardOutput(usage)
                }
                return 0
            }
            guard let command = command(name) else { throw UsageError(message: "unknown benchmark '\(name)'", usage: usage) }
            if rest.contains("--help") || rest.contains("-h") {
                Output.standardOutput(command.usage)
                return 0
            }
            return try command.run(rest)
        } catch let error as UsageError {
            Output.standardError("nucleic-bench: \(error.message)\n\n\(error.usage)")
            return 64
        } catch let error as BenchError {
            Output.standardError("nucleic-bench: \(error.message)")
            return 1
        } catch {
            Output.standardError("nucleic-bench: \(error)")
            return 1
        }
    }

    static func command(_ name: String) -> (any BenchCommand.Type)? { commands.first { $0.name == name } }
}

extension String {
    /// Left-aligned in `width` columns (ASCII text).
    func padding(to width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    /// Right-aligned in `width` columns (ASCII text).
    func leftPadding(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
