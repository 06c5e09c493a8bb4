import CShims
import Glibc
public import NucleicProtocol

/// The files of a session's shim, all in the session folder (`sessions/<id>/`).
///
/// - `raw.jsonl`: the raw journal; the shim is its only writer (it holds the journal's `flock`).
/// - `shim.sock`: the shim's Unix socket; one daemon connection at a time.
/// - `adopt.lock`: `flock`ed by the daemon that has adopted the shim, for as long as it has; the
///   kernel releases it when that daemon dies, SIGKILL included. A second daemon cannot adopt.
/// - `shim.json`: the shim's and the agent's pids and argv, for people (docs/OPERATIONS.md).
/// - `exit.json`: the agent's exit status and stderr tail, written when it exits.
/// - `shim.log`: the shim's own diagnostics.
public struct ShimFiles: Sendable, Hashable {
    public let folder: String

    public init(folder: String) { self.folder = folder }

    public var journal: String { folder + "/raw.jsonl" }
    /// `shim.sock` in the folder when that path fits in a Unix socket address (107 bytes), else
    /// `/tmp/nucleic-<uid>/shim-<hash of the folder>.sock` (a private folder; see `privateRuntimeFolder`).
    public var socket: String {
        let preferred = folder + "/shim.sock"
        if preferred.utf8.count < Int(nucleic_sun_path_capacity()) { return preferred }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in folder.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return Self.privateRuntimeFolder + "/shim-" + String(hash, radix: 16) + ".sock"
    }

    /// `/tmp/nucleic-<uid>`, created mode 0700 if missing; only used when it is a real folder
    /// (not a link) that this user owns and no one else can write.
    static var privateRuntimeFolder: String {
        let path = "/tmp/nucleic-\(getuid())"
        _ = mkdir(path, 0o700)
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == getuid(), info.st_mode & 0o022 == 0 else {
            return "/nonexistent-unsafe-\(path.dropFirst())"
        }
        return path
    }
    public var adoptLock: String { folder + "/adopt.lock" }
    public var info: String { folder + "/shim.json" }
    public var exit: String { folder + "/exit.json" }
    public var log: String { folder + "/shim.log" }
}

/// One message on a shim's socket: a JSON object on one line, `op` naming it.
///
/// Daemon → shim: `hello`; `line` (journal it as `in`, then write it to the agent's stdin);
/// `closeStdin`; `signal` (to the agent's process group); `terminate` (SIGINT → SIGTERM →
/// SIGKILL, `graceMS` apart); `release` (the daemon has recorded the exit: the shim may go).
///
/// Shim → daemon: `state` (the answer to `hello`: where this agent's records start in the
/// journal, the durable end, the agent's pid, its exit if it exited);
/// `journal` (the journal is durable up to `end`); `exit` (the agent exited, every line it wrote
/// is in the journal up to `end`); `condition` (the journal cannot be written: the disk is full,
/// the agent is held back; or it can again).
///
/// The agent's ACP terminals are the shim's children: `terminalCreate`, `terminalRead`,
/// `terminalKill`, `terminalRelease` from the daemon; `terminalStarted`, `terminalOutput`,
/// `terminalExit` from the shim; `state` lists them (`terminals`, absent from older shims).
public enum ShimMessage: Sendable, Hashable {
    /// The version of this message set, sent in `state` (as `protocol`). A daemon adopts shims of
    /// its version or older (an upgraded daemon meets the shims the old binary started), and
    /// leaves newer ones alone. Adding a message or a field keeps the version; changing one's
    /// meaning bumps it.
    public static let protocolVersion: Int64 = 1

    case hello
    case line(String)
    case closeStdin
    case signal(Int32)
    case terminate(graceMS: Int64)
    case release
    case state(journalStart: Int64, journalEnd: Int64, agentPID: Int32, exit: ShimExit?)
    case journal(end: Int64)
    case exit(ShimExit)
    /// The journal cannot be written (`diskFull` with the error's message; the shim has stopped
    /// reading the agent and retries), or can again (`diskFull: false`).
    case condition(diskFull: Bool, message: String)
    /// Daemon → shim: run a terminal for the agent's `terminal/create` `key` (its JSON-RPC id):
    /// once per key, for the agent's life; a key seen before answers with the terminal it made.
    case terminalCreate(ShimTerminalSpec)
    /// Shim → daemon: the terminal for `key` runs as `id`, or could not start (`error`).
    case terminalStarted(key: String, id: String, error: String?)
    /// Daemon → shim: the output kept of terminal `id`, answered with `terminalOutput` and `ref`.
    case terminalRead(ref: Int64, id: String)
    /// Shim → daemon: terminal `id`'s output (the newest `limit` bytes), and its exit once it exited.
    case terminalOutput(ref: Int64, id: String, output: String, truncated: Bool, exit: ChildProcess.ExitStatus?)
    /// Daemon → shim: end terminal `id` (SIGTERM to its group, SIGKILL 2 s later); `exit` follows.
    case terminalKill(id: String)
    /// Daemon → shim: end terminal `id` if it still runs, and forget it.
    case terminalRelease(id: String)
    /// Shim → daemon: terminal `id` exited (sent to the daemon connected then; `state` lists the rest).
    case terminalExit(id: String, status: ChildProcess.ExitStatus)

    public var json: JSONValue {
        switch self {
        case .hello: ["op": "hello"]
        case .line(let text): ["op": "line", "text": .string(text)]
        case .closeStdin: ["op": "closeStdin"]
        case .signal(let signal): ["op": "signal", "signal": .int(Int64(signal))]
        case .terminate(let grace): ["op": "terminate", "graceMS": .int(grace)]
        case .release: ["op": "release"]
        case .state(let start, let end, let pid, let exit):
            ["op": "state", "protocol": .int(Self.protocolVersion), "journalStart": .int(start), "journalEnd": .int(end),
             "agentPID": .int(Int64(pid)), "exit": exit?.json ?? .null]
        case .journal(let end): ["op": "journal", "end": .int(end)]
        case .exit(let exit): ["op": "exit", "exit": exit.json]
        case .condition(let full, let message): ["op": "condition", "diskFull": .bool(full), "message": .string(message)]
        case .terminalCreate(let spec): spec.json
        case .terminalStarted(let key, let id, let error):
            ["op": "terminalStarted", "key": .string(key), "id": .string(id), "error": error.map(JSONValue.string) ?? .null]
        case .terminalRead(let ref, let id): ["op": "terminalRead", "ref": .int(ref), "id": .string(id)]
        case .terminalOutput(let ref, let id, let output, let truncated, let exit):
            ["op": "terminalOutput", "ref": .int(ref), "id": .string(id), "output": .string(output), "truncated": .bool(truncated),
             "exit": exit.map(ShimTerminalState.json) ?? .null]
        case .terminalKill(let id): ["op": "terminalKill", "id": .string(id)]
        case .terminalRelease(let id): ["op": "terminalRelease", "id": .string(id)]
        case .terminalExit(let id, let status): ["op": "terminalExit", "id": .string(id), "exit": ShimTerminalState.json(status)]
        }
    }

    public init?(json: JSONValue) {
        switch json["op"]?.stringValue {
        case "hello": self = .hello
        case "line": guard let text = json["text"]?.stringValue else { return nil }; self = .line(text)
        case "closeStdin": self = .closeStdin
        case "signal": guard let n = json["signal"]?.intValue else { return nil }; self = .signal(Int32(n))
        case "terminate": self = .terminate(graceMS: json["graceMS"]?.intValue ?? 3000)
        case "release": self = .release
        case "state":
            guard let start = json["journalStart"]?.intValue, let end = json["journalEnd"]?.intValue,
                  let pid = json["agentPID"]?.intValue else { return nil }
            self = .state(journalStart: start, journalEnd: end, agentPID: Int32(pid), exit: json["exit"].flatMap(ShimExit.init(json:)))
        case "journal": guard let end = json["end"]?.intValue else { return nil }; self = .journal(end: end)
        case "condition":
            self = .condition(diskFull: json["diskFull"]?.boolValue ?? false, message: json["message"]?.stringValue ?? "")
        case "exit": guard let exit = json["exit"].flatMap(ShimExit.init(json:)) else { return nil }; self = .exit(exit)
        case "terminalCreate": guard let spec = ShimTerminalSpec(json: json) else { return nil }; self = .terminalCreate(spec)
        case "terminalStarted":
            guard let key = json["key"]?.stringValue, let id = json["id"]?.stringValue else { return nil }
            self = .terminalStarted(key: key, id: id, error: json["error"]?.stringValue)
        case "terminalRead":
            guard let ref = json["ref"]?.intValue, let id = json["id"]?.stringValue else { return nil }
            self = .terminalRead(ref: ref, id: id)
        case "terminalOutput":
            guard let ref = json["ref"]?.intValue, let id = json["id"]?.stringValue else { return nil }
            self = .terminalOutput(ref: ref, id: id, output: json["output"]?.stringValue ?? "", truncated: json["truncated"]?.boolValue ?? false,
                                   exit: json["exit"].flatMap(ShimTerminalState.status))
        case "terminalKill": guard let id = json["id"]?.stringValue else { return nil }; self = .terminalKill(id: id)
        case "terminalRelease": guard let id = json["id"]?.stringValue else { return nil }; self = .terminalRelease(id: id)
        case "terminalExit":
            guard let id = json["id"]?.stringValue, let status = json["exit"].flatMap(ShimTerminalState.status) else { return nil }
            self = .terminalExit(id: id, status: status)
        default: return nil
        }
    }

    /// The message as one line, newline included.
    public var wireLine: [UInt8] { Array((JSONWriter.string(json) + "\n").utf8) }

    /// Removes the complete lines at the front of `buffer` and returns them (without newlines);
    /// an incomplete last line stays. One pass, one move of the rest.
    public static func takeLines(from buffer: inout [UInt8]) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = 0
        while let newline = buffer[start...].firstIndex(of: 0x0A) {
            lines.append(buffer[start..<newline])
            start = newline + 1
        }
        guard start > 0 else { return [] }
        let taken = lines.map { ArraySlice(Array($0)) }
        buffer.removeFirst(start)
        return taken
    }
}

/// How the agent ended, as the shim saw it.
public struct ShimExit: Sendable, Hashable {
    public var status: ChildProcess.ExitStatus
    /// The last bytes of its stderr.
    public var stderrTail: String
    /// Every line the agent wrote is in the journal before this offset.
    public var journalEnd: Int64
    /// Where the shim's own record of the exit (an `err` line, `nucleic shim: the agent …`)
    /// starts: the daemon records the exit's events with this `rawOffset`, so a later daemon can
    /// tell the exit is already in the transcript. Nil when it could not be written.
    public var recordOffset: Int64?

    public init(status: ChildProcess.ExitStatus, stderrTail: String, journalEnd: Int64, recordOffset: Int64? = nil) {
        self.status = status
        self.stderrTail = stderrTail
        self.journalEnd = journalEnd
        self.recordOffset = recordOffset
    }

    public var json: JSONValue {
        var object: JSONObject = ["stderrTail": .string(stderrTail), "journalEnd": .int(journalEnd)]
        if let recordOffset { object["recordOffset"] = .int(recordOffset) }
        switch status {
        case .exited(let code): object["code"] = .int(Int64(code))
        case .signaled(let signal): object["signal"] = .int(Int64(signal))
        }
        return .object(object)
    }

    public init?(json: JSONValue) {
        guard json.objectValue != nil, let end = json["journalEnd"]?.intValue else { return nil }
        if let signal = json["signal"]?.intValue {
            status = .signaled(Int32(signal))
        } else if let code = json["code"]?.intValue {
            status = .exited(Int32(code))
        } else {
            return nil
        }
        stderrTail = json["stderrTail"]?.stringValue ?? ""
        journalEnd = end
        recordOffset = json["recordOffset"]?.intValue
    }
}

/// What a terminal runs: the agent's `terminal/create`, already judged by the daemon.
public struct ShimTerminalSpec: Sendable, Hashable {
    /// The request's JSON-RPC id as JSON text: one terminal per key for the agent's life.
    public var key: String
    public var executable: String
    public var arguments: [String]
    public var workingDirectory: String
    public var environment: [String: String]
    /// The most output kept, in bytes.
    public var limit: Int

    public init(key: String, executable: String, arguments: [String], workingDirectory: String, environment: [String: String], limit: Int) {
        self.key = key
        self.executable = executable
        self.arguments = arguments
        self.workingDirectory = workingDirectory
        self.environment = environment
        self.limit = limit
    }

    var json: JSONValue {
        var environment = JSONObject()
        for (name, value) in self.environment.sorted(by: { $0.key < $1.key }) { environment[name] = .string(value) }
        return ["op": "terminalCreate", "key": .string(key), "executable": .string(executable), "arguments": .array(arguments.map(JSONValue.string)),
                "cwd": .string(workingDirectory), "environment": .object(environment), "limit": .int(Int64(limit))]
    }

    init?(json: JSONValue) {
        guard let key = json["key"]?.stringValue, let executable = json["executable"]?.stringValue, let cwd = json["cwd"]?.stringValue else { return nil }
        self.key = key
        self.executable = executable
        arguments = (json["arguments"]?.arrayValue ?? []).compactMap(\.stringValue)
        workingDirectory = cwd
        var environment: [String: String] = [:]
        for entry in json["environment"]?.objectValue ?? JSONObject() { environment[entry.key] = entry.value.stringValue }
        self.environment = environment
        limit = Int(json["limit"]?.intValue ?? 0)
    }
}

/// A terminal the shim holds, as its `state` lists it (`terminals`) when a daemon connects.
public struct ShimTerminalState: Sendable, Hashable {
    public var id: String
    public var key: String
    public var exit: ChildProcess.ExitStatus?

    public init(id: String, key: String, exit: ChildProcess.ExitStatus?) {
        self.id = id
        self.key = key
        self.exit = exit
    }

    public var json: JSONValue { ["id": .string(id), "key": .string(key), "exit": exit.map(Self.json) ?? .null] }

    public init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let key = json["key"]?.stringValue else { return nil }
        self.id = id
        self.key = key
        exit = json["exit"].flatMap(Self.status)
    }

    static func json(_ status: ChildProcess.ExitStatus) -> JSONValue {
        switch status {
        case .exited(let code): ["code": .int(Int64(code))]
        case .signaled(let signal): ["signal": .int(Int64(signal))]
        }
    }

    static func status(_ json: JSONValue) -> ChildProcess.ExitStatus? {
        if let signal = json["signal"]?.intValue { return .signaled(Int32(signal)) }
        if let code = json["code"]?.intValue { return .exited(Int32(code)) }
        return nil
    }
}
