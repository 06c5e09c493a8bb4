import NucleicSystem

/// Runs `body` on a thread of its own and waits for it without blocking the test's pool thread,
/// for tests that block (waiting for signals, for `runBlocking`) while other suites run.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        let rc = startDetachedThread(name: "nucleic-test") { continuation.resume(returning: body()) }
        precondition(rc == 0, "cannot start a test thread (\(rc))")
    }
}
