import Glibc
import NucleicDaemon
import Synchronization
import Testing

/// What the recording services did, in order, across all of them.
final class Journal: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}

/// A service that runs until asked to stop (or, with `endsAfter`, until that many yields), and
/// writes down when it ran, was asked to stop and returned.
struct Recording: Service {
    let name: String
    let journal: Journal
    var failure: String?
    var endsOnItsOwn = false
    private let stop = AsyncStream<Void>.makeStream()

    init(_ name: String, _ journal: Journal, failure: String? = nil, endsOnItsOwn: Bool = false) {
        self.name = name
        self.journal = journal
        self.failure = failure
        self.endsOnItsOwn = endsOnItsOwn
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    func run() async throws {
        journal.append("run \(name)")
        if let failure { throw Failure(description: failure) }
        if !endsOnItsOwn { for await _ in stop.stream {} }
        journal.append("end \(name)")
    }

    func shutdown() async {
        journal.append("stop \(name)")
        stop.continuation.finish()
    }
}

@Suite struct ServiceGroupTests {
    @Test func shutdownStopsServicesInReverseOrderEachAfterTheLaterOnesReturned() async throws {
        let journal = Journal()
        let events = Mutex<[ServiceGroup.Event]>([])
        let group = ServiceGroup([Recording("a", journal), Recording("b", journal), Recording("c", journal)]) { event in
            events.withLock { $0.append(event) }
        }
        let running = Task { try await group.run() }
        // Wait until all three run (a service's first act), then ask.
        while journal.all.filter({ $0.hasPrefix("run ") }).count < 3 { await Task.yield() }
        #expect(await group.triggerGracefulShutdown(reason: "test"))
        #expect(await !group.triggerGracefulShutdown(reason: "again"), "the shutdown happens once")
        try await running.value
        #expect(Array(journal.all.dropFirst(3)) == ["stop c", "end c", "stop b", "end b", "stop a", "end a"])
        #expect(events.withLock { $0 } == [
            .shutdownBegan(reason: "test"), .stopping("c"), .returned("c"), .stopping("b"), .returned("b"), .stopping("a"), .returned("a"),
        ])
    }

    @Test func aServiceThatEndsOnItsOwnStopsTheOthersAndIsNotAskedToStop() async throws {
        let journal = Journal()
        let events = Mutex<[ServiceGroup.Event]>([])
        let group = ServiceGroup([Recording("a", journal), Recording("b", journal, endsOnItsOwn: true), Recording("c", journal)]) { event in
            events.withLock { $0.append(event) }
        }
        try await group.run()
        let log = events.withLock { $0 }
        #expect(log.contains(.shutdownBegan(reason: "b ended")))
        #expect(!log.contains(.stopping("b")))
        #expect(log.filter { if case .stopping = $0 { true } else { false } } == [.stopping("c"), .stopping("a")])
        #expect(journal.all.filter { $0.hasPrefix("end ") }.count == 3)
    }

    @Test func theFirstErrorIsRethrownAfterEveryServiceReturned() async throws {
        let journal = Journal()
        let group = ServiceGroup([Recording("a", journal), Recording("b", journal, failure: "b broke")])
        await #expect(throws: Recording.Failure.self) { try await group.run() }
        #expect(journal.all.contains("stop a") && journal.all.contains("end a"))
    }

    /// SIGUSR2 stands in for SIGTERM, which the test process must keep.
    @Test func aWatchedSignalBeginsTheShutdownWithItsName() async throws {
        let journal = Journal()
        let events = Mutex<[ServiceGroup.Event]>([])
        let group = ServiceGroup([Recording("a", journal), Recording("b", journal)], signals: [SIGUSR2]) { event in
            events.withLock { $0.append(event) }
        }
        let running = Task { try await group.run() }
        while journal.all.filter({ $0.hasPrefix("run ") }).count < 2 { await Task.yield() }
        // Sent until it is seen: the Dispatch source may not be registered yet when `run` starts
        // the services, and a signal before that is ignored.
        while await !group.isShuttingDown {
            kill(getpid(), SIGUSR2)
            try await Task.sleep(for: .milliseconds(20))
        }
        try await running.value
        #expect(events.withLock { $0 }.first == .shutdownBegan(reason: "signal \(SIGUSR2)"))
        #expect(Array(journal.all.dropFirst(2)) == ["stop b", "end b", "stop a", "end a"])
    }

    @Test func cancellingTheRunningTaskShutsDownGracefully() async throws {
        let journal = Journal()
        let group = ServiceGroup([Recording("a", journal), Recording("b", journal)])
        let running = Task { try await group.run() }
        while journal.all.filter({ $0.hasPrefix("run ") }).count < 2 { await Task.yield() }
        running.cancel()
        try await running.value
        #expect(Array(journal.all.dropFirst(2)) == ["stop b", "end b", "stop a", "end a"])
    }
}
