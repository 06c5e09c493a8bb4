// The `nucleic` command: argument parsing and output only; the work is in the libraries.
#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine

let arguments = Array(CommandLine.arguments.dropFirst())
let status = CLI.run(arguments)
// The output is complete: let the pager (if one runs) show it until the user quits it.
Pager.finish()
exit(status)
