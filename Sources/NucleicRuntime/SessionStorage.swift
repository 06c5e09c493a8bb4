public import NucleicProtocol

/// Where a session's record goes: the raw journal (every line both ways, verbatim) and the
/// transcript (the numbered events). The store's files implement it; the Session actor only
/// appends.
public protocol SessionStorage: Sendable {
    /// Appends one raw line; returns the byte offset of its record in the journal.
    func appendRaw(_ direction: RawDirection, line: [UInt8], t: Double) throws -> Int64
    /// Appends events whose seqs continue the transcript exactly (no gap, no repeat).
    func appendEvents(_ events: [SequencedEvent]) throws
    /// The last seq written (0 for a new transcript).
    var lastSeq: Int64 { get throws }
}

/// The direction of a raw journal record (the fixture format's `dir`).
public enum RawDirection: String, Sendable, Hashable {
    /// The agent's stdout.
    case out
    /// What the host wrote to the agent's stdin.
    case `in`
    /// The agent's stderr.
    case err
}
