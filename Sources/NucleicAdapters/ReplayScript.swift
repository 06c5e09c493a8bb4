public import NucleicProtocol

/// A recorded agent session played as the agent: the pure half of `nucleic replay-agent`.
///
/// The script walks a fixture's records in order (docs/FIXTURES.md). `out` and `err` records are
/// lines to write (to stdout, to stderr); an `in` record is a point where the host must write a
/// line that *means the same* as the recorded one (see `ReplayScript+Judging.swift`). The driver
/// hands over every host line (`take`) and the end of its input (`hostClosed`) as they come, and
/// asks `next()` what to do now: write a line, wait for the host, stop on a divergence, or stop
/// because the script is over and the host has closed stdin. Host lines that come while the
/// script is still writing are queued and judged in order when the script reaches them.
///
/// Request ids are mapped both ways:
/// - the host's own requests (Claude `control_request`s, Codex requests) carry ids of the host's
///   choosing: the recorded id is mapped to the host's, and a recorded `out` line that answers it
///   is written with the host's id instead;
/// - the agent's own requests (Claude `can_use_tool`, Codex server requests) are written as
///   recorded, and the host's answer must carry the recorded id.
///
/// The host closing stdin is a divergence only while an `in` record is still ahead: once the
/// host's part is over, the rest of the recording is written as it was (the real CLIs finish
/// their turn after stdin closes) and the script ends.
public struct ReplayScript: Sendable {
    /// The protocols the replay agent can judge host lines of.
    public enum Backend: String, Sendable, Hashable {
        case claude, codex
        /// The Agent Client Protocol: JSON-RPC like Codex; the agent's requests of its client
        /// (`fs/*`, `terminal/*`) are answered by the host, and their paths follow the folder the
        /// replay runs in (`workingFolder`).
        case acp
    }

    /// One recorded message.
    public struct Record: Sendable, Hashable {
        public enum Direction: String, Sendable, Hashable {
            /// The agent wrote it to stdout.
            case out
            /// The host wrote it to the agent's stdin.
            case `in`
            /// The agent wrote it to stderr.
            case err
        }

        /// 1 for the first record after the header, 2 for the next, …
        public var number: Int
        /// Seconds since the recording started.
        public var t: Double
        public var direction: Direction
        /// The exact line, without its newline.
        public var line: String

        public init(number: Int, t: Double, direction: Direction, line: String) {
            self.number = number
            self.t = t
            self.direction = direction
            self.line = line
        }
    }

    /// A line for the agent's side to write.
    public struct Output: Sendable, Hashable {
        public enum Stream: Sendable, Hashable { case stdout, stderr }

        public var stream: Stream
        /// The line to write, without its newline (ids already mapped).
        public var line: String
        /// Seconds to wait before writing it: its recorded gap after the previous record.
        public var delay: Double
        /// The record it comes from.
        public var record: Int
    }

    /// What the driver does next.
    public enum Action: Sendable, Hashable {
        /// Write this line (after its delay, when pacing as recorded).
        case write(Output)
        /// Read more from the host: the script waits for a host line, or (after the last record)
        /// for the end of the host's input.
        case waitForHost
        /// Stop: the host diverged from the recording (exit with `divergence.exitStatus`).
        case fail(ReplayDivergence)
        /// Stop: every record is played and the host closed stdin (exit 0).
        case done
    }

    public let backend: Backend
    public let records: [Record]
    /// Index in `records` of the next record to play.
    public private(set) var position = 0
    /// Recorded ids of the host's requests → the ids the host actually used.
    public private(set) var hostRequestIDs: [JSONValue: JSONValue] = [:]
    /// The agent's requests written so far, by id: for Claude `can_use_tool`, the tool input it
    /// asked about (an approval answer is judged by whether it changes it); for other requests,
    /// their method or subtype as a string.
    public private(set) var agentRequests: [JSONValue: JSONValue] = [:]
    /// Whether the host has closed its end of stdin.
    public private(set) var hostClosedInput = false
    /// ACP: the folder the replay runs in. The recording's folder (`session/new`'s `cwd`) is
    /// written as this one in the agent's lines, so that the paths the agent asks the host to
    /// read and write are inside the host's worktree, as they were inside the recorded one.
    public var workingFolder: String?
    /// ACP: the recording's folder.
    public let recordedFolder: String?

    /// Host lines not judged yet, oldest first.
    private var queued: [LineFramer.Output] = []
    private var queueHead = 0
    private var failure: ReplayDivergence?
    /// `t` of the last record played, for the gap before the next.
    private var lastT: Double = 0

    public init(backend: Backend, records: [Record]) {
        self.backend = backend
        self.records = records
        recordedFolder = backend != .acp ? nil : records.lazy.compactMap { record -> String? in
            guard record.direction == .in, let message = try? JSONParser.parse(record.line),
                ["session/new", "session/load", "session/resume"].contains(message["method"]?.stringValue ?? "") else { return nil }
            return message["params"]?["cwd"]?.stringValue
        }.first
    }

    /// Host lines received and not yet judged.
    public var queuedCount: Int { queued.count - queueHead }

    /// Whether an `in` record is still ahead: closing stdin now would cut the script short.
    public var expectsHostLines: Bool { records[position...].contains { $0.direction == .in } }

    // MARK: Input from the host

    /// A line the host wrote (or one too long to hold); judged when the script reaches it.
    public mutating func take(_ line: LineFramer.Output) {
        queued.append(line)
    }

    /// A complete line the host wrote, without its newline.
    public mutating func take(line: some Collection<UInt8>) {
        take(.line(Array(line)))
    }

    /// The host closed stdin.
    public mutating func hostClosed() {
        hostClosedInput = true
    }

    // MARK: Playing

    /// What to do now. Judges queued host lines as far as the script goes without writing.
    public mutating func next() -> Action {
        if let failure { return .fail(failure) }
        while position < records.count {
            let record = records[position]
            switch record.direction {
            case .out, .err:
                position += 1
                let delay = max(0, record.t - lastT)
                lastT = max(lastT, record.t)
                let line = record.direction == .out ? agentLine(record.line) : record.line
                return .write(Output(stream: record.direction == .out ? .stdout : .stderr, line: line, delay: delay, record: record.number))
            case .in:
                guard let host = dequeue() else {
                    guard hostClosedInput else { return .waitForHost }
                    return fail(ReplayDivergence(
                        .closedEarly, record: record.number, expected: describeRecorded(record.line),
                        got: "the end of stdin (the host closed it)"))
                }
                if let divergence = judge(host, against: record) { return fail(divergence) }
                position += 1
                lastT = max(lastT, record.t)
            }
        }
        if let extra = dequeue() {
            return fail(ReplayDivergence(
                .afterEnd, record: records.last?.number ?? 0, expected: "the end of stdin (the recording has no more host lines)",
                got: describeHost(extra)))
        }
        return hostClosedInput ? .done : .waitForHost
    }

    private mutating func fail(_ divergence: ReplayDivergence) -> Action {
        failure = divergence
        return .fail(divergence)
    }

    private mutating func dequeue() -> LineFramer.Output? {
        guard queueHead < queued.count else { return nil }
        let line = queued[queueHead]
        queueHead += 1
        if queueHead == queued.count {
            queued.removeAll(keepingCapacity: true)
            queueHead = 0
        }
        return line
    }

    // MARK: Agent lines

    /// A recorded agent line as it is written now: its requests noted, and an answer to one of
    /// the host's requests re-addressed to the id the host used. Anything else is written
    /// byte for byte as recorded.
    mutating func agentLine(_ recorded: String) -> String {
        var line = recorded
        if backend == .acp, let from = recordedFolder, let to = workingFolder, from != to, !from.isEmpty {
            line = line.replacing(from, with: to)
        }
        guard let message = try? JSONParser.parse(line), case .object(var object) = message else { return line }
        switch backend {
        case .claude:
            switch object["type"]?.stringValue {
            case "control_request":
                guard let id = object["request_id"], !id.isNull else { return line }
                let request = object["request"]
                agentRequests[Self.idKey(id)] = request?["subtype"]?.stringValue == "can_use_tool"
                    ? (request?["input"] ?? .object([:])) : .string(request?["subtype"]?.stringValue ?? "control_request")
                return line
            case "control_response":
                guard case .object(var response)? = object["response"], let recorded = response["request_id"],
                    let actual = hostRequestIDs[Self.idKey(recorded)], actual != recorded
                else { return line }
                response["request_id"] = actual
                object["response"] = .object(response)
                return JSONWriter.string(.object(object))
            default:
                return line
            }
        case .codex, .acp:
            guard let id = object["id"], !id.isNull else { return line }
            if let method = object["method"]?.stringValue {
                agentRequests[Self.idKey(id)] = .string(method)
                return line
            }
            guard let actual = hostRequestIDs[Self.idKey(id)], actual != id else { return line }
            object["id"] = actual
            return JSONWriter.string(.object(object))
        }
    }

    /// Request ids compare by value: `3` and `3.0` are one id.
    static func idKey(_ id: JSONValue) -> JSONValue {
        if case .double = id, let integer = id.intValue { return .int(integer) }
        return id
    }

    /// Notes that the host's request recorded as `recorded` came as `actual`.
    mutating func mapHostRequest(recorded: JSONValue, actual: JSONValue) {
        hostRequestIDs[Self.idKey(recorded)] = actual
    }
}

/// How the host's side of a replay differs from the recording.
public struct ReplayDivergence: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// A host line that means something else than the recorded one.
        case mismatch
        /// A host line that is not a JSON message (or is over the line limit).
        case malformed
        /// The host closed stdin while the script still expected a line.
        case closedEarly
        /// The host wrote a line after the script's last record.
        case afterEnd
    }

    public var kind: Kind
    /// The record the host's line was judged against (the last record, for `afterEnd`).
    public var record: Int
    /// What the recording has there, in words.
    public var expected: String
    /// What came instead, in words.
    public var got: String

    public init(_ kind: Kind, record: Int, expected: String, got: String) {
        self.kind = kind
        self.record = record
        self.expected = expected
        self.got = got
    }

    /// `nucleic replay-agent`'s exit status for it: 4 when the host stopped early, else 3.
    public var exitStatus: Int32 { kind == .closedEarly ? 4 : 3 }

    /// `record 7: expected …, got …` (the command prefixes the fixture's path).
    public var description: String {
        switch kind {
        case .afterEnd: "after the last record (\(record)): expected \(expected), got \(got)"
        default: "record \(record): expected \(expected), got \(got)"
        }
    }
}
