#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import Synchronization

/// A command an ACP agent runs through `terminal/create`: a child of the host in its own process
/// group, stdin closed, stdout and stderr kept together up to `limit` bytes (the oldest dropped
/// first, at a character boundary, as the protocol asks).
final class ClientTerminal: Sendable {
    /// The most output the host keeps of one terminal, whatever the agent asks.
    static let maximumOutputBytes = 1 << 20

    let id: String
    let process: ChildProcess
    let limit: Int
    private let buffer = Mutex<(bytes: [UInt8], truncated: Bool)>(([], false))

    init(id: String, process: ChildProcess, limit: Int) {
        self.id = id
        self.process = process
        self.limit = limit
        process.closeStdin()
        Task { for await chunk in process.stdout { self.append(chunk) } }
        Task { for await chunk in process.stderr { self.append(chunk) } }
    }

    private func append(_ chunk: [UInt8]) {
        buffer.withLock { state in
            state.bytes += chunk
            guard state.bytes.count > limit else { return }
            var cut = state.bytes.count - limit
            // Never start inside a UTF-8 sequence: skip its continuation bytes.
            while cut < state.bytes.count, state.bytes[cut] & 0xC0 == 0x80 { cut += 1 }
            state.bytes.removeFirst(cut)
            state.truncated = true
        }
    }

    /// The output kept so far, and whether older output was dropped.
    var output: (text: String, truncated: Bool) {
        buffer.withLock { (String(decoding: $0.bytes, as: UTF8.self), $0.truncated) }
    }

    /// ACP's `TerminalExitStatus`: `exitCode` or `signal` (its name).
    static func json(_ status: ChildProcess.ExitStatus) -> JSONValue {
        switch status {
        case .exited(let code): ["exitCode": .int(Int64(code)), "signal": .null]
        case .signaled(let signal): ["exitCode": .null, "signal": .string(signalName(signal).map { "SIG" + $0 } ?? "\(signal)")]
        }
    }

    private static func signalName(_ signal: Int32) -> String? {
        switch signal {
        case SIGHUP: "HUP"
        case SIGINT: "INT"
        case SIGQUIT: "QUIT"
        case SIGKILL: "KILL"
        case SIGTERM: "TERM"
        case SIGPIPE: "PIPE"
        case SIGSEGV: "SEGV"
        case SIGABRT: "ABRT"
        default: nil
        }
    }
}

/// The files an ACP agent reads and writes through the host, already judged to be inside the
/// worktree.
enum ClientFiles {
    /// The most the host reads of one file for the agent.
    static let maximumReadBytes = 16 << 20

    enum ReadOutcome {
        case bytes([UInt8])
        case tooLarge
        case failed(String)
    }

    static func read(_ path: String, limit: Int) -> ReadOutcome {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failed(String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failed(String(cString: strerror(errno)))
            }
            if n == 0 { return .bytes(bytes) }
            bytes += chunk[..<n]
            if bytes.count > limit { return .tooLarge }
        }
    }

    /// Writes the whole file (creating it, 0644 before the umask); nil when it worked, else why not.
    static func write(_ path: String, _ bytes: [UInt8]) -> String? {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return String(cString: strerror(errno)) }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += n
        }
        return nil
    }
}
