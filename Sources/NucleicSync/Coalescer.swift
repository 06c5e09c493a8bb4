public import NucleicProtocol

/// The `coalesced` verbosity for one subscriber: consecutive streamed deltas of the same kind
/// (assistant text, reasoning, one tool call's input or output) merged into one event.
///
/// A pure value: `add` takes events in seq order and returns what to send now; `flush` returns
/// the merged delta held back (the caller flushes every 150 ms). A held delta is sent when any
/// other event arrives (a block boundary), before that event.
///
/// ### Invariants
/// - Output is in seq order, and every input event is covered by exactly one output event.
/// - A merged event is the concatenation of the deltas it covers, with the `seq` and `ts` of the
///   last of them (so a client resuming from it with `sinceSeq` misses nothing).
/// - At most one merged event is held at a time.
public struct Coalescer: Sendable, Hashable {
    /// The delta being merged, if any.
    public private(set) var pending: SequencedEvent?

    public init() {}

    /// What of `events` (and of the held delta) to send now.
    public mutating func add(_ events: [SequencedEvent]) -> [SequencedEvent] {
        var out: [SequencedEvent] = []
        for event in events {
            guard Self.isDelta(event.event) else {
                if let held = pending.take() { out.append(held) }
                out.append(event)
                continue
            }
            if let held = pending, let merged = Self.merge(held, event) {
                pending = merged
            } else {
                if let held = pending.take() { out.append(held) }
                pending = event
            }
        }
        return out
    }

    /// The held delta, if any (the 150 ms flush).
    public mutating func flush() -> [SequencedEvent] {
        pending.take().map { [$0] } ?? []
    }

    /// `add` then `flush`: a whole batch coalesced (a backlog read from the transcript).
    public static func coalesce(_ events: [SequencedEvent]) -> [SequencedEvent] {
        var coalescer = Coalescer()
        return coalescer.add(events) + coalescer.flush()
    }

    static func isDelta(_ event: AgentEvent) -> Bool {
        switch event {
        case .assistantText(_, true), .reasoning(_, true), .toolCallInputDelta, .toolCallOutputDelta: true
        default: false
        }
    }

    /// `a` and `b` as one event, or nil when they are different streams.
    static func merge(_ a: SequencedEvent, _ b: SequencedEvent) -> SequencedEvent? {
        let event: AgentEvent
        switch (a.event, b.event) {
        case (.assistantText(let x, true), .assistantText(let y, true)): event = .assistantText(text: x + y, isPartial: true)
        case (.reasoning(let x, true), .reasoning(let y, true)): event = .reasoning(text: x + y, isPartial: true)
        case (.toolCallInputDelta(let i, let x), .toolCallInputDelta(let j, let y)) where i == j: event = .toolCallInputDelta(toolCallID: i, delta: x + y)
        case (.toolCallOutputDelta(let i, let x), .toolCallOutputDelta(let j, let y)) where i == j: event = .toolCallOutputDelta(toolCallID: i, delta: x + y)
        default: return nil
        }
        return SequencedEvent(seq: b.seq, ts: b.ts, event: event, rawOffset: b.rawOffset)
    }
}
