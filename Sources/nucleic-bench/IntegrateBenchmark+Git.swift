import NucleicSystem

/// The `git` CLI for `nucleic-bench integrate`: the peer rows, the resets between passes and the
/// checks after them.
///
/// Each command a `Spawn` child with its stderr in a scratch file, read back when it fails.
struct GitRunner {
    /// Where each command's stderr goes (truncated per command).
    let errorFile: String

    /// Runs `git -C directory arguments…` and returns its stdout; a non-zero exit throws with
    /// the command's stderr.
    @discardableResult
    func run(_ arguments: [String], in directory: String, input: String? = nil, capture: Bool = true) throws(BenchError) -> String {
        try execute(["git", "-C", directory] + arguments, input: input, capture: capture)
    }

    /// Runs any command (`rm -rf` for the clean-up) the same way.
    @discardableResult
    func execute(_ argv: [String], input: String? = nil, capture: Bool = true) throws(BenchError) -> String {
        let exit = try Spawn.run(argv, input: input, capture: capture, errors: errorFile, hint: "is it installed and on PATH?")
        guard exit.succeeded else {
            let errors = (try? Files.read(errorFile)).map { String(decoding: $0.suffix(2000), as: UTF8.self) } ?? ""
            throw BenchError(message: "\(argv.joined(separator: " ")) failed (wait status \(exit.status)): \(errors)")
        }
        return String(decoding: exit.output, as: UTF8.self)
    }

    /// ``run(_:in:input:capture:)`` with stdout discarded, timed (spawn to reaped child).
    func timed(_ arguments: [String], in directory: String) throws(BenchError) -> Double {
        let start = monotonicSeconds()
        try run(arguments, in: directory, capture: false)
        return monotonicSeconds() - start
    }

    /// The trimmed stdout of a query (`rev-parse`, `status --porcelain`).
    func value(_ arguments: [String], in directory: String) throws(BenchError) -> String {
        var text = try run(arguments, in: directory)
        while let last = text.last, last.isNewline { text.removeLast() }
        return text
    }

    /// The version line (`git version 2.39.5`).
    func version() -> String {
        guard let line = try? value(["--version"], in: "/") else { return "?" }
        return line.hasPrefix("git version ") ? String(line.dropFirst("git version ".count)) : line
    }
}
