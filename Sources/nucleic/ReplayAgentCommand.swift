#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicSystem
import NucleicCommandLine

/// `nucleic replay-agent FIXTURE`: a recorded agent CLI on stdin/stdout, for hosts under test.
///
/// A thin loop around `ReplayScript` (NucleicAdapters), which decides everything: this reads the
/// host's lines from stdin with a `LineFramer`, writes the script's lines, and paces them.
/// One thread: while it waits (for a recorded gap or for the host) it reads stdin, so host lines
/// that come early are queued by the script and judged in order.
enum ReplayAgentCommand {
    static var usage: String { NucleicCommands.help("replay-agent") }

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["speed"], usage: usage)
        guard let path = parsed.positionals.first else { throw UsageError(message: "give the FIXTURE to replay", usage: usage) }
        guard parsed.positionals.count == 1 else { throw UsageError(message: "unexpected argument '\(parsed.positionals[1])'", usage: usage) }
        let speed = parsed["speed"] ?? "recorded"
        guard speed == "recorded" || speed == "max" else {
            throw UsageError(message: "--speed is recorded or max, not '\(speed)'", usage: usage)
        }
        var script: ReplayScript
        do { script = try ReplayScript(fixture: try readFile(path)) } catch let error as ReplayScript.FormatError {
            throw CommandError(message: "\(path) \(error)")
        }
        // An ACP recording's paths follow the folder it is replayed in (the session's worktree).
        script.workingFolder = SessionCommands.currentDirectory()
        // A host that stops reading must not kill us mid-line: a failed write is reported instead.
        signal(SIGPIPE, SIG_IGN)
        let effects = ReplayFileEffects.plan(script)
        var stdin = HostInput()
        var lastActivity = monotonicSeconds()
        while true {
            switch script.next() {
            case .write(let output):
                if speed == "recorded" {
                    // The gap runs from the last write, or from the end of the last wait for the
                    // host; host lines that come meanwhile are queued and do not stretch it.
                    let due = lastActivity + output.delay
                    while true {
                        let left = due - monotonicSeconds()
                        guard left > 0 else { break }
                        stdin.read(into: &script, timeoutMS: Int32(min(left * 1000, 60_000).rounded(.up)))
                    }
                }
                for effect in effects[output.record] ?? [] {
                    if let problem = FileEffectWriter.carryOut(effect) {
                        Output.standardError("replay-agent: \(path) record \(output.record): \(problem)")
                    }
                }
                let fd: Int32 = output.stream == .stdout ? 1 : 2
                if !writeLine(fd, output.line) && fd == 1 {
                    Output.standardError("replay-agent: \(path) record \(output.record): cannot write to stdout: the host closed it")
                    return 4
                }
                lastActivity = monotonicSeconds()
            case .waitForHost:
                stdin.read(into: &script, timeoutMS: -1)
                lastActivity = monotonicSeconds()
            case .fail(let divergence):
                Output.standardError("replay-agent: \(path) \(divergence)")
                return divergence.exitStatus
            case .done:
                return 0
            }
        }
    }

    /// The host's side of stdin: bytes framed into lines, handed to the script as they come.
    struct HostInput {
        private var framer = LineFramer()
        private var buffer = [UInt8](repeating: 0, count: 1 << 16)
        private(set) var closed = false

        /// Waits at most `timeoutMS` (-1: as long as it takes) for input and passes on what came.
        /// Returns whether anything came (bytes, or the end of input).
        @discardableResult
        mutating func read(into script: inout ReplayScript, timeoutMS: Int32) -> Bool {
            guard !closed else {
                if timeoutMS > 0 { usleep(UInt32(timeoutMS) * 1000) }
                return false
            }
            var pollfd = Glibc.pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollfd, 1, timeoutMS)
            if ready == 0 || (ready < 0 && errno == EINTR) { return false }
            let n = ready < 0 ? -1 : buffer.withUnsafeMutableBytes { Glibc.read(0, $0.baseAddress, $0.count) }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { return false }
            if n > 0 {
                for line in framer.feed(buffer[0..<n]) { script.take(line) }
                return true
            }
            // End of input (or an error reading it, which ends it just the same).
            if let last = framer.finish() { script.take(last) }
            script.hostClosed()
            closed = true
            return true
        }
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { Syscall.read(fd, $0.baseAddress, $0.count) }
            guard n >= 0 else { throw CommandError(message: "reading \(path) failed: \(String(cString: strerror(errno)))") }
            if n == 0 { return bytes }
            bytes += chunk[0..<n]
        }
    }

    /// Writes `line` and a newline; false when the reader is gone.
    static func writeLine(_ fd: Int32, _ line: String) -> Bool {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        return writeAll(fd, bytes)
    }

    /// Writes all of `bytes`; false when that fails.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var rest = bytes[...]
        while !rest.isEmpty {
            let n = rest.withUnsafeBytes { Syscall.write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return false }
            rest = rest.dropFirst(n)
        }
        return true
    }

    static func monotonicSeconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

/// Makes a recorded file change in the current folder (ReplayFileEffects decides what).
enum FileEffectWriter {
    /// nil when done; otherwise what went wrong (the replay goes on: a host under test sees
    /// the recorded lines whatever the folder holds).
    static func carryOut(_ effect: ReplayFileEffects.Effect) -> String? {
        let current = try? FileText.read(effect.path)
        do {
            let after = try ReplayFileEffects.apply(effect, to: current)
            let target = ReplayFileEffects.destination(of: effect)
            if target != effect.path || after == nil { unlink(effect.path) }
            guard let after else { return nil }
            makeParents(target)
            let fd = open(target, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return "cannot write \(target): \(String(cString: strerror(errno)))" }
            defer { close(fd) }
            guard ReplayAgentCommand.writeAll(fd, Array(after.utf8)) else { return "writing \(target) failed: \(String(cString: strerror(errno)))" }
            return nil
        } catch {
            return error.message
        }
    }

    private static func makeParents(_ path: String) {
        var folder = ""
        for part in path.split(separator: "/").dropLast() {
            folder += (folder.isEmpty ? "" : "/") + part
            mkdir(folder, 0o755)
        }
    }
}
