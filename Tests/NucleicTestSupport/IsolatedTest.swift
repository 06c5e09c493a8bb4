public import Foundation

/// Runs one test in a process of its own: this test binary again, with only that test selected
/// and `NUCLEIC_ISOLATED_TEST` naming it. For tests of what belongs to a whole process (a file
/// size limit, resident memory) that other tests running beside them would disturb.
///
/// Swift Testing's exit tests do the same, but their monitor thread waits with
/// `waitid(P_ALL, …, WNOWAIT)`: once any other child of the test process is a zombie (the
/// end-to-end tests make this process a subreaper, so orphaned daemons and agents become its
/// children until their harness collects them), it sees that zombie forever, never its own child,
/// and spins while the exit test hangs. This waits for its one child by pid.
///
/// The child test is declared beside the parent with `.enabled(if: IsolatedTest.isChild(name))`,
/// so it is skipped in the normal run; it reports by its exit status and its output.
public enum IsolatedTest {
    public static let variable = "NUCLEIC_ISOLATED_TEST"

    /// Whether this process is the child started for `name`.
    public static func isChild(_ name: String) -> Bool {
        ProcessInfo.processInfo.environment[variable] == name
    }

    /// Runs the tests of this binary whose id matches `filter` (a Swift Testing `--filter`
    /// pattern: name the child test uniquely) with `NUCLEIC_ISOLATED_TEST=name`; returns its exit
    /// status (-1 if it was killed by a signal) and everything it printed.
    public static func run(_ name: String, filter: String) async throws -> (status: Int32, output: String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("isolated-\(name)-\(UUID().uuidString.prefix(8)).log")
        FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let log = try FileHandle(forWritingTo: output)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        process.arguments = ["--testing-library", "swift-testing", "--filter", filter]
        var environment = ProcessInfo.processInfo.environment
        environment[variable] = name
        process.environment = environment
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in
                continuation.resume(returning: finished.terminationReason == .exit ? finished.terminationStatus : -1)
            }
            do { try process.run() } catch { continuation.resume(throwing: error) }
        }
        try log.close()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        return (status, text)
    }
}
