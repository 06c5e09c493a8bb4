import Glibc
import NucleicSystem
import Synchronization
import Testing

@Suite struct ThreadTests {
    @Test func aDetachedThreadRunsWithItsName() {
        let names = BlockingQueue<String>()
        #expect(startDetachedThread(name: "nucleic-test") { names.push(currentThreadName()) } == 0)
        #expect(names.pop(timeout: .seconds(10)) == "nucleic-test")
    }

    @Test func theKernelKeepsFifteenBytesOfAName() {
        let names = BlockingQueue<String>()
        #expect(startDetachedThread(name: "nucleic-a-very-long-name") { names.push(currentThreadName()) } == 0)
        #expect(names.pop(timeout: .seconds(10)) == "nucleic-a-very-")
    }

    @Test func eachThreadIsItsOwn() {
        let threads = BlockingQueue<pthread_t>()
        // Each thread stays alive until all have reported, so no thread id can be reused.
        let release = BlockingQueue<Void>()
        for _ in 0..<4 {
            #expect(startDetachedThread(name: "nucleic-each") {
                threads.push(pthread_self())
                _ = release.pop()
            } == 0)
        }
        var seen: [pthread_t] = []
        for _ in 0..<4 { if let thread = threads.pop(timeout: .seconds(10)) { seen.append(thread) } }
        release.close()
        #expect(seen.count == 4)
        #expect(Set(seen).count == 4)
        #expect(!seen.contains { pthread_equal($0, pthread_self()) != 0 })
    }
}

@Suite struct BlockingQueueTests {
    @Test func popsInTheOrderPushed() {
        let queue = BlockingQueue<Int>()
        for i in 0..<500 { #expect(queue.push(i)) }
        var popped: [Int] = []
        for _ in 0..<500 { popped.append(queue.pop()!) }
        #expect(popped == Array(0..<500))
        #expect(queue.pop(timeout: .milliseconds(1)) == nil)
    }

    @Test func aConsumerOnAnotherThreadGetsEverythingInOrder() {
        let queue = BlockingQueue<Int>()
        let received = BlockingQueue<[Int]>()
        #expect(startDetachedThread(name: "nucleic-consume") {
            var all: [Int] = []
            while let next = queue.pop() { all.append(next) }
            received.push(all)
        } == 0)
        for i in 0..<10_000 { queue.push(i) }
        queue.close()
        #expect(received.pop(timeout: .seconds(30)) == Array(0..<10_000))
    }

    @Test func popWaitsForAPushFromAnotherThread() {
        let queue = BlockingQueue<String>()
        #expect(startDetachedThread(name: "nucleic-late") {
            usleep(50_000)
            queue.push("late")
        } == 0)
        #expect(queue.pop() == "late")
    }

    @Test func aTimedPopGivesUpWithoutAnElement() {
        let queue = BlockingQueue<Int>()
        var before = timespec()
        clock_gettime(CLOCK_MONOTONIC, &before)
        #expect(queue.pop(timeout: .milliseconds(30)) == nil)
        var after = timespec()
        clock_gettime(CLOCK_MONOTONIC, &after)
        let waited = (after.tv_sec - before.tv_sec) * 1_000_000_000 + (after.tv_nsec - before.tv_nsec)
        #expect(waited >= 30_000_000)
    }

    @Test func closingDrainsThenEndsAndRefusesPushes() {
        let queue = BlockingQueue<Int>()
        queue.push(1)
        queue.push(2)
        queue.close()
        #expect(queue.isClosed)
        #expect(!queue.push(3))
        #expect(queue.pop() == 1)
        #expect(queue.pop() == 2)
        #expect(queue.pop() == nil)
        #expect(queue.pop(timeout: .seconds(1)) == nil)
    }

    @Test func pushLastIsTheLastElement() {
        let queue = BlockingQueue<String>()
        queue.push("write")
        #expect(queue.pushLast("close"))
        #expect(!queue.pushLast("close again"))
        #expect(!queue.push("write after close"))
        #expect(queue.pop() == "write")
        #expect(queue.pop() == "close")
        #expect(queue.pop() == nil)
    }

    @Test func runBlockingWaitsForAsyncWork() async throws {
        // From a thread of its own, as an executable's main thread calls it.
        let value = try await onOwnThread {
            runBlocking { () async throws -> Int in
                try await Task.sleep(for: .milliseconds(20))
                return 42
            }
        }.get()
        #expect(value == 42)
        struct Failure: Error, Equatable {}
        let failed = await onOwnThread { runBlocking { () async throws -> Int in throw Failure() } }
        #expect(throws: Failure.self) { try failed.get() }
    }
}
