import NucleicProtocol
import NucleicTestSupport
import Testing
@testable import NucleicSync

/// The `coalesced` verbosity as a pure value: every state and boundary.
struct CoalescerTests {
    func e(_ seq: Int64, _ event: AgentEvent) -> SequencedEvent {
        SequencedEvent(seq: seq, ts: Timestamp(millisecondsSince1970: 1000 + seq), event: event)
    }

    @Test func consecutiveTextDeltasMergeAndCarryTheLastSeq() {
        var c = Coalescer()
        #expect(c.add([e(1, .assistantText(text: "Hel", isPartial: true)), e(2, .assistantText(text: "lo", isPartial: true))]).isEmpty)
        #expect(c.pending == e(2, .assistantText(text: "Hello", isPartial: true)))
        #expect(c.add([e(3, .assistantText(text: " you", isPartial: true))]).isEmpty)
        #expect(c.flush() == [e(3, .assistantText(text: "Hello you", isPartial: true))])
        #expect(c.pending == nil)
        #expect(c.flush().isEmpty)
    }

    @Test func aBoundaryFlushesTheHeldDeltaFirst() {
        var c = Coalescer()
        let out = c.add([
            e(1, .assistantText(text: "a", isPartial: true)), e(2, .assistantText(text: "b", isPartial: true)),
            e(3, .assistantText(text: "ab", isPartial: false)),
            e(4, .toolCallInputDelta(toolCallID: "t1", delta: "{\"co")), e(5, .toolCallInputDelta(toolCallID: "t1", delta: "mmand\"}")),
            e(6, .toolCallInputDelta(toolCallID: "t2", delta: "{")),
        ])
        #expect(out == [
            e(2, .assistantText(text: "ab", isPartial: true)), e(3, .assistantText(text: "ab", isPartial: false)),
            e(5, .toolCallInputDelta(toolCallID: "t1", delta: "{\"command\"}")),
        ])
        #expect(c.pending == e(6, .toolCallInputDelta(toolCallID: "t2", delta: "{")))
    }

    @Test func differentStreamsAreNotMerged() {
        let events = [
            e(1, .reasoning(text: "x", isPartial: true)), e(2, .assistantText(text: "y", isPartial: true)),
            e(3, .toolCallOutputDelta(toolCallID: "t", delta: "out")), e(4, .toolCallOutputDelta(toolCallID: "t", delta: "put")),
            e(5, .runFinished(RunFinished(isError: false, stopReason: "end_turn", result: nil, usage: nil, costUSD: nil))),
        ]
        let out = Coalescer.coalesce(events)
        #expect(out.map(\.seq) == [1, 2, 4, 5])
        #expect(out[2].event == .toolCallOutputDelta(toolCallID: "t", delta: "output"))
    }

    @Test func everyEventIsCoveredOnceInOrder() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            var events: [SequencedEvent] = []
            for seq in 1...Int64.random(in: 1...40, using: &generator) {
                let kind = Int.random(in: 0..<5, using: &generator)
                let event: AgentEvent = switch kind {
                case 0: .assistantText(text: "t\(seq)", isPartial: true)
                case 1: .toolCallInputDelta(toolCallID: "a", delta: "i\(seq)")
                case 2: .toolCallInputDelta(toolCallID: "b", delta: "i\(seq)")
                case 3: .reasoning(text: "r\(seq)", isPartial: true)
                default: .userInput(text: "u\(seq)")
                }
                events.append(e(seq, event))
            }
            // Split into random batches, flushing at random moments, as live delivery does.
            var c = Coalescer()
            var out: [SequencedEvent] = []
            var index = 0
            while index < events.count {
                let take = Int.random(in: 1...5, using: &generator)
                out += c.add(Array(events[index..<min(events.count, index + take)]))
                if Bool.random(using: &generator) { out += c.flush() }
                index += take
            }
            out += c.flush()
            #expect(out.map(\.seq) == out.map(\.seq).sorted())
            #expect(out.last?.seq == events.last?.seq)
            // Per stream, the text sent is the text of every delta, in order.
            func streams(_ list: [SequencedEvent]) -> [String: String] {
                var out: [String: String] = [:]
                for item in list {
                    switch item.event {
                    case .assistantText(let t, _): out["text", default: ""] += t
                    case .reasoning(let t, _): out["reasoning", default: ""] += t
                    case .userInput(let t): out["user", default: ""] += t
                    case .toolCallInputDelta(let id, let d): out[id, default: ""] += d
                    default: break
                    }
                }
                return out
            }
            #expect(streams(out) == streams(events))
        }
    }
}
