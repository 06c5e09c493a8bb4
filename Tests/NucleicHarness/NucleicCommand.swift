public import Foundation
public import NucleicRuntime
import NucleicTestSupport
import Synchronization

/// The built `nucleic` run as a real child process, as a user runs it: the one way tests drive
/// the binary (`DaemonHarness` runs every CLI call and `nucleic serve` through it).
///
/// Spawned with `ChildProcess` (pipes close-on-exec, the signal mask reset), so a daemon the CLI
/// starts on demand inherits none of the pipes, and reading a command's output to its end
/// finishes when the command exits. The daemon is never started in this process.
public final class NucleicCommand: Sendable {
    /// A finished run: how it ended and everything it wrote.
    public struct Run: Sendable, CustomStringConvertible {
        public var status: ChildProcess.ExitStatus
        public var stdout: String
        public var stderr: String
        /// The exit code; -1 when a signal ended it.
        public var code: Int32 { if case .exited(let code) = status { code } else { -1 } }
        /// `stdout` split into lines, without the empty last one.
        public var lines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init).filter { !$0.isEmpty } }
        public var description: String { "\(status); stdout: \(stdout); stderr: \(stderr)" }
    }

    /// The child process itself (its pid, signals, stderr tail).
    public let process: ChildProcess
    /// Standard output line by line, as it comes, empty lines left out (one consumer).
    public let lines: AsyncStream<String>
    private let collected = Collected()
    private let readers: Task<Void, Never>

    /// Starts `nucleic <arguments>` with this process's environment plus `environment`, in
    /// `workingDirectory`. Without `keepStdin` its standard input is closed at once (it reads
    /// end of file, as from /dev/null). Without `readsStderr` standard error is left to the
    /// caller (`process.stderr`), e.g. to wait for a line the daemon logs.
    public init(_ arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil, keepStdin: Bool = false,
                readsStderr: Bool = true) throws {
        let full = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let process = try ChildProcess.spawn(executable: NucleicBinary.path, arguments: arguments, environment: full, workingDirectory: workingDirectory)
        if !keepStdin { process.closeStdin() }
        self.process = process
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        let collected = self.collected
        readers = Task {
            async let out: Void = {
                var pending: [UInt8] = []
                func emit(_ bytes: ArraySlice<UInt8>) {
                    guard !bytes.isEmpty else { return }
                    let line = String(decoding: bytes, as: UTF8.self)
                    collected.seen.withLock { $0.append(line) }
                    continuation.yield(line)
                }
                for await chunk in process.stdout {
                    collected.output.withLock { $0 += chunk }
                    pending += chunk
                    while let newline = pending.firstIndex(of: 0x0A) {
                        emit(pending[..<newline])
                        pending.removeSubrange(...newline)
                    }
                }
                if !pending.isEmpty { emit(pending[...]) }
                continuation.finish()
            }()
            async let err: Void = {
                guard readsStderr else { return }
                for await chunk in process.stderr { collected.errors.withLock { $0 += chunk } }
            }()
            _ = await (out, err)
        }
    }

    /// Runs `nucleic <arguments>` to its end (see `init`), `stdin` as its standard input (written
    /// while its outputs drain, so a large input cannot deadlock on full pipes).
    public static func run(_ arguments: [String], environment: [String: String] = [:], workingDirectory: String? = nil,
                           stdin: [UInt8] = []) async throws -> Run {
        let command = try NucleicCommand(arguments, environment: environment, workingDirectory: workingDirectory, keepStdin: !stdin.isEmpty)
        if !stdin.isEmpty {
            try? await command.process.write(stdin)
            command.process.closeStdin()
        }
        return await command.finish()
    }

    /// Every non-empty stdout line so far (including those read from `lines`).
    public var all: [String] { collected.seen.withLock { $0 } }

    /// Standard error so far.
    public var stderr: String { String(decoding: collected.errors.withLock { $0 }, as: UTF8.self) }

    /// Reads `lines` until one contains `text`; nil if the output ended first.
    @discardableResult
    public func waitForLine(containing text: String) async -> String? {
        for await line in lines where line.contains(text) { return line }
        return nil
    }

    /// Writes `line` and a newline to its standard input (started with `keepStdin`).
    public func send(_ line: String) async throws {
        try await process.write(line: line)
    }

    /// Waits for the exit and for both outputs to end; returns everything.
    public func finish() async -> Run {
        let status = await process.wait()
        await readers.value
        return Run(status: status, stdout: String(decoding: collected.output.withLock { $0 }, as: UTF8.self), stderr: stderr)
    }

    /// Waits for the exit.
    public func wait() async -> ChildProcess.ExitStatus { await process.wait() }

    /// Kills it with SIGKILL and waits for it.
    public func kill() async {
        _ = try? process.signal(SIGKILL, group: false)
        _ = await process.wait()
    }
}

/// What a command wrote, shared by its reader task and its readers.
private final class Collected: Sendable {
    let seen = Mutex<[String]>([])
    let output = Mutex<[UInt8]>([])
    let errors = Mutex<[UInt8]>([])
}
