#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol
import NucleicSystem
import NucleicCommandLine

/// `nucleic events`: a raw agent stdout stream in, normalized events out as JSON lines.
enum EventsCommand {
    static var usage: String { NucleicCommands.help("events") }

    /// The line limit: 64 MiB unless `NUCLEIC_MAX_LINE_BYTES` says otherwise.
    static func lineLimit() throws -> Int {
        guard let raw = getenv("NUCLEIC_MAX_LINE_BYTES").map({ String(cString: $0) }) else { return LineFramer.defaultLimit }
        guard let limit = Int(raw), limit > 0 else {
            throw CommandError(message: "NUCLEIC_MAX_LINE_BYTES must be a positive number of bytes, not '\(raw)'", status: 64)
        }
        return limit
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["backend"], usage: usage)
        guard parsed.positionals.count <= 1 else { throw UsageError(message: "give at most one FILE", usage: usage) }
        if let backend = parsed["backend"], Codecs.capabilities(backend) == nil {
            throw UsageError(message: "unknown backend '\(backend)' (choose \(Codecs.names.joined(separator: " or ")))", usage: usage)
        }
        let path = parsed.positionals.first ?? "-"
        let fd: Int32 = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CommandError(message: "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { if fd != 0 { close(fd) } }

        var session = EventStream(backend: parsed["backend"], usage: usage)
        var framer = LineFramer(limit: try lineLimit())
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { Syscall.read(fd, $0.baseAddress, $0.count) }
            guard n >= 0 else { throw CommandError(message: "reading \(path) failed: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            for output in framer.feed(buffer[0..<n]) { try session.take(output) }
        }
        if let last = framer.finish() { try session.take(last) }
        try session.finish()
        return 0
    }
}

/// Decodes lines as they come and prints each event at once (a live `tail -f | nucleic events`
/// shows events as the agent writes them).
private struct EventStream {
    private var codec: (any AgentCodec)?
    private let requestedBackend: String?
    private let usage: String
    private var seq: Int64 = 0
    private var isFixture = false
    private var sawFirstLine = false

    init(backend: String?, usage: String) {
        requestedBackend = backend
        self.usage = usage
    }

    mutating func take(_ output: LineFramer.Output) throws {
        switch output {
        case .overLimit(let preview, let byteCount):
            let codec = try codecForStream(firstLine: nil)
            emit(codec.overLimit(preview: preview, byteCount: byteCount).events)
        case .line(let line):
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
            if !sawFirstLine {
                sawFirstLine = true
                if let header = try? JSONParser.parse(line), header["fixture"] != nil {
                    isFixture = true
                    codec = try codecForStream(firstLine: header)
                    return
                }
            }
            if isFixture { try fixtureRecord(line) } else { try agentLine(line) }
        }
    }

    mutating func finish() throws {
        if codec == nil && !sawFirstLine { _ = try codecForStream(firstLine: nil) }
    }

    private mutating func agentLine(_ line: [UInt8]) throws {
        var codec = try codecForStream(firstLine: nil)
        let output = codec.receive(line: line, now: .now())
        self.codec = codec
        emit(output.events)
    }

    private mutating func fixtureRecord(_ line: [UInt8]) throws {
        var codec = try codecForStream(firstLine: nil)
        defer { self.codec = codec }
        guard let record = try? JSONParser.parse(line), let direction = record["dir"]?.stringValue,
            let text = record["line"]?.stringValue
        else {
            emit([.error(code: "malformedRecord", message: "a fixture line is not a {t, dir, line} record", preview: Preview.text(line))])
            return
        }
        switch direction {
        case "out": emit(codec.receive(line: Array(text.utf8), now: .now()).events)
        case "in": emit(codec.observeHostLine(Array(text.utf8), now: .now()).events)
        default: break  // stderr lines are not events
        }
    }

    private mutating func codecForStream(firstLine header: JSONValue?) throws -> any AgentCodec {
        if let codec { return codec }
        guard let name = requestedBackend ?? header?["backend"]?.stringValue else {
            throw UsageError(message: "--backend is required (\(Codecs.names.joined(separator: ", ")))", usage: usage)
        }
        if let header, let recorded = header["backend"]?.stringValue, recorded != name {
            throw CommandError(message: "the fixture was recorded from \(recorded), not \(name)")
        }
        // A session's raw journal names the manifest it was started with (`cli`: `kimi`, `vibe`),
        // and its sessionStarted says that name, as the live transcript does; a fixture's `cli`
        // is a program and version, not a name.
        let cli = header?["cli"]?.stringValue
        let named = cli.flatMap { $0 != "replay" && $0.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" } && !$0.isEmpty ? $0 : nil }
        guard let made = Codecs.make(name, backend: named) else {
            throw UsageError(message: "unknown backend '\(name)' (choose \(Codecs.names.joined(separator: " or ")))", usage: usage)
        }
        codec = made
        return made
    }

    private mutating func emit(_ events: [AgentEvent]) {
        var out: [UInt8] = []
        for event in events {
            seq += 1
            JSONWriter.write(SequencedEvent(seq: seq, ts: .now(), event: event).json, into: &out)
            out.append(0x0A)
        }
        if !out.isEmpty { Output.write(1, String(decoding: out, as: UTF8.self)) }
    }
}
