// The `nucleic` command: argument parsing and output only; the work is in the libraries.
#if canImport(Glibc)
import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
exit(CLI.run(arguments))
