public import NucleicProtocol

/// Reading a fixture (DESIGN.md §6, docs/FIXTURES.md) into a script.
extension ReplayScript {
    /// Why a file cannot be replayed; `line` is the file's line number (the header is line 1).
    public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible {
        public let line: Int
        public let message: String

        public init(line: Int, _ message: String) {
            self.line = line
            self.message = message
        }

        public var description: String { "line \(line): \(message)" }
    }

    /// The script of a whole fixture file: a `{"fixture":1,"backend":…}` header, then one
    /// `{"t","dir","line"}` record per line. Blank lines are skipped (they number no record).
    public init(fixture bytes: some Collection<UInt8>) throws(FormatError) {
        var framer = LineFramer()
        var lines: [LineFramer.Output] = framer.feed(bytes)
        if let last = framer.finish() { lines.append(last) }
        guard case .line(let first)? = lines.first,
            let header = try? JSONParser.parse(first), header["fixture"] != nil
        else {
            throw FormatError(line: 1, "not a fixture: the first line must be a header like {\"fixture\":1,\"backend\":\"claude\",…}")
        }
        guard header["fixture"]?.intValue == 1 else {
            throw FormatError(line: 1, "fixture format \(JSONWriter.string(header["fixture"] ?? .null)) is not one this build reads (1)")
        }
        guard let name = header["backend"]?.stringValue, let backend = Backend(rawValue: name) else {
            let name = header["backend"].map { JSONWriter.string($0) } ?? "(none)"
            throw FormatError(line: 1, "the recording's backend \(name) cannot be replayed: the replay agent plays \"claude\", \"codex\" and \"acp\" recordings")
        }
        var records: [Record] = []
        for (index, output) in lines.enumerated().dropFirst() {
            let lineNumber = index + 1
            guard case .line(let bytes) = output else {
                throw FormatError(line: lineNumber, "the record is longer than \(LineFramer.defaultLimit >> 20) MiB")
            }
            if Self.trimmed(bytes).isEmpty { continue }
            records.append(try Self.record(bytes, number: records.count + 1, lineNumber: lineNumber))
        }
        self.init(backend: backend, records: records)
    }

    static func record(_ bytes: [UInt8], number: Int, lineNumber: Int) throws(FormatError) -> Record {
        let shape = "a record must look like {\"t\":0.12,\"dir\":\"out\"|\"in\"|\"err\",\"line\":\"…\"}"
        guard let value = try? JSONParser.parse(bytes), case .object = value else {
            throw FormatError(line: lineNumber, "not JSON: \(shape)")
        }
        guard let dir = value["dir"]?.stringValue, let direction = Record.Direction(rawValue: dir) else {
            throw FormatError(line: lineNumber, "\"dir\" is missing or not out, in or err: \(shape)")
        }
        guard let line = value["line"]?.stringValue else {
            throw FormatError(line: lineNumber, "\"line\" is missing or not a string: \(shape)")
        }
        let t: Double
        switch value["t"] {
        case nil, .null?: t = 0
        case let number?:
            guard let seconds = number.doubleValue, seconds >= 0 else { throw FormatError(line: lineNumber, "\"t\" must be seconds (a number ≥ 0): \(shape)") }
            t = seconds
        }
        return Record(number: number, t: t, direction: direction, line: line)
    }
}
