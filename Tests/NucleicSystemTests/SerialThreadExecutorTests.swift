import Glibc
import NucleicSystem
import Synchronization
import Testing

/// An actor on a `SerialThreadExecutor`, recording where and how its work runs.
actor Recorder {
    nonisolated let executor: SerialThreadExecutor
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private(set) var entries: [Int] = []
    private var inside = 0
    private(set) var mostInside = 0
    private(set) var offThread = 0

    init(executor: SerialThreadExecutor) { self.executor = executor }

    /// Records `value`, checking that nothing else of this executor runs meanwhile.
    func record(_ value: Int) {
        inside += 1
        mostInside = max(mostInside, inside)
        if !executor.isCurrentThread { offThread += 1 }
        // Burn a little time so overlapping calls, if the executor allowed them, would show.
        var spin = 0
        for i in 0..<2_000 { spin &+= i }
        if spin == -1 { entries.append(-1) }
        entries.append(value)
        inside -= 1
    }

    func threadName() -> String { currentThreadName() }

    func assumeIsolatedWorks() -> Bool {
        executor.checkIsolated()
        return true
    }
}

@Suite struct SerialThreadExecutorTests {
    @Test func anActorRunsOnTheExecutorsNamedThread() async {
        let executor = SerialThreadExecutor(name: "nucleic-exec")
        let recorder = Recorder(executor: executor)
        #expect(await recorder.threadName() == "nucleic-exec")
        #expect(await recorder.assumeIsolatedWorks())
        #expect(!executor.isCurrentThread)
    }

    @Test func queuedClosuresRunInOrderOnTheThread() async {
        let executor = SerialThreadExecutor(name: "nucleic-order")
        let seen = Mutex<[Int]>([])
        let offThread = Mutex(0)
        for i in 0..<1_000 {
            executor.execute {
                if !executor.isCurrentThread { offThread.withLock { $0 += 1 } }
                seen.withLock { $0.append(i) }
            }
        }
        let last = await executor.run { () -> Int in seen.withLock { $0.count } }
        #expect(last == 1_000)
        #expect(seen.withLock { $0 } == Array(0..<1_000))
        #expect(offThread.withLock { $0 } == 0)
    }

    @Test func runReturnsValuesAndTypedErrors() async throws {
        struct Refused: Error, Equatable { let reason: String }
        let executor = SerialThreadExecutor(name: "nucleic-run")
        let name = await executor.run { () -> String in currentThreadName() }
        #expect(name == "nucleic-run")
        do {
            _ = try await executor.run { () throws(Refused) -> Int in throw Refused(reason: "no") }
            Issue.record("run did not throw")
        } catch {
            #expect(error == Refused(reason: "no"))
        }
    }

    @Test func concurrentCallsNeverOverlapAndActorsSharingAnExecutorShareItsThread() async {
        let executor = SerialThreadExecutor(name: "nucleic-shared")
        let first = Recorder(executor: executor)
        let second = Recorder(executor: executor)
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask { await first.record(i) }
                group.addTask { await second.record(i) }
            }
        }
        #expect(await first.entries.sorted() == Array(0..<200))
        #expect(await second.entries.sorted() == Array(0..<200))
        #expect(await first.mostInside == 1)
        #expect(await first.offThread == 0)
        #expect(await second.offThread == 0)
        #expect(await first.threadName() == "nucleic-shared")
        #expect(await second.threadName() == "nucleic-shared")
    }

    @Test func twoExecutorsHaveTwoThreads() async {
        let a = SerialThreadExecutor(name: "nucleic-a")
        let b = SerialThreadExecutor(name: "nucleic-b")
        let aThread = await a.run { pthread_self() }
        let bThread = await b.run { pthread_self() }
        #expect(pthread_equal(aThread, bThread) == 0)
        #expect(await a.run { b.isCurrentThread } == false)
        #expect(await b.run { b.isCurrentThread } == true)
    }

    @Test func queuedWorkStillRunsWhenTheExecutorIsReleased() {
        let done = BlockingQueue<Int>()
        do {
            let executor = SerialThreadExecutor(name: "nucleic-release")
            for i in 0..<10 { executor.execute { usleep(1_000); done.push(i) } }
        }
        var seen: [Int] = []
        for _ in 0..<10 { if let i = done.pop(timeout: .seconds(10)) { seen.append(i) } }
        #expect(seen == Array(0..<10))
    }
}
