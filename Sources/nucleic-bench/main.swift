// `nucleic-bench`: throughput benchmarks (docs/BENCHMARKS.md). Argument handling is in BenchCLI;
// each benchmark is a subcommand type.
#if canImport(Glibc)
import Glibc
#endif

exit(BenchCLI.run(Array(CommandLine.arguments.dropFirst())))
