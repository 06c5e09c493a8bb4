#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol

/// `nucleic demo`: a recorded agent session, replayed through the codec and shown as a person
/// reads it. (Until sessions exist, this is what the README's main-job command runs.)
enum DemoCommand {
    static let usage = """
        usage: nucleic demo [--fixture FILE] [--fast] [--json]

        Replays a recorded Claude Code session (Fixtures/claude/tool-allow.jsonl: the agent asks
        to run a command, the recorded answer allows it, the agent finishes) through the Claude
        codec and prints what happened as you would read it.

        Options:
          --fixture FILE   another recording (docs/FIXTURES.md)
          --fast           no pauses between events
          --json           the normalized events as JSON lines instead
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: ["fixture"], boolean: ["fast", "json"], usage: usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: usage) }
        let path = try parsed["fixture"] ?? Resources.path("Fixtures/claude/tool-allow.jsonl")
        let records = try FixtureFile.read(path)
        guard var codec = Codecs.make(records.backend) else {
            throw CommandError(message: "\(path) was recorded from '\(records.backend)', which this build has no codec for")
        }
        let renderer = TranscriptRenderer()
        var seq: Int64 = 0
        if !parsed.flag("json") { Output.standardOutput("Replaying \(path) (\(records.backend) \(records.cli), scenario \(records.scenario))\n") }
        for record in records.records {
            let output: CodecOutput
            switch record.direction {
            case "out": output = codec.receive(line: Array(record.line.utf8), now: .now())
            case "in": output = codec.observeHostLine(Array(record.line.utf8), now: .now())
            default: continue
            }
            for event in output.events {
                seq += 1
                if parsed.flag("json") {
                    Output.standardOutput(JSONWriter.string(SequencedEvent(seq: seq, ts: .now(), event: event).json))
                } else if let line = renderer.render(event) {
                    Output.standardOutput(line)
                    if !parsed.flag("fast") { usleep(150_000) }
                }
            }
        }
        return 0
    }
}

/// A fixture file read whole (fixtures are small; journals are read line by line elsewhere).
struct FixtureFile {
    struct Record {
        var direction: String
        var line: String
    }

    var backend: String
    var cli: String
    var scenario: String
    var records: [Record]

    static func read(_ path: String) throws -> FixtureFile {
        guard let file = fopen(path, "r") else {
            throw CommandError(message: "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var framer = LineFramer()
        var lines: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, file)
            if n == 0 { break }
            for case .line(let line) in framer.feed(buffer[0..<n]) { lines.append(line) }
        }
        if case .line(let line)? = framer.finish() { lines.append(line) }
        guard let first = lines.first, let header = try? JSONParser.parse(first), header["fixture"]?.intValue == 1,
            let backend = header["backend"]?.stringValue
        else { throw CommandError(message: "\(path) is not a fixture: its first line must be a {\"fixture\":1,\"backend\":…} header") }
        var records: [Record] = []
        for (number, bytes) in lines.dropFirst().enumerated() where !bytes.isEmpty {
            guard let record = try? JSONParser.parse(bytes), let direction = record["dir"]?.stringValue,
                let line = record["line"]?.stringValue
            else { throw CommandError(message: "\(path):\(number + 2) is not a {t, dir, line} record") }
            records.append(Record(direction: direction, line: line))
        }
        return FixtureFile(backend: backend, cli: header["cli"]?.stringValue ?? "?",
                           scenario: header["scenario"]?.stringValue ?? "?", records: records)
    }
}
