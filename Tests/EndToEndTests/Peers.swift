import Foundation
import NucleicHarness
import NucleicRuntime
import NucleicTestSupport

/// The real programs end-to-end tests run against: the pinned Claude Code and Codex CLIs and the
/// Python mock model APIs (installed by `scripts/peers.sh`, which the test command runs).
enum Peers {
    static let environment = ProcessInfo.processInfo.environment

    /// The repository checkout (for `Tests/Peers/*.py`, `Adapters/`, `Fixtures/`).
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// CI must prove the real CLIs work: there, a missing CLI fails the tests instead of skipping.
    static let isCI = environment["CI"] == "true"

    static let claudeBinary = executable("NUCLEIC_CLAUDE_BIN")
    static let codexBinary = executable("NUCLEIC_CODEX_BIN")
    static let python = executable("NUCLEIC_PEERS_PYTHON") ?? "/usr/bin/python3"

    /// Whether tests that need `binary` run: always in CI (and fail there if it is missing).
    static func shouldRun(_ binary: String?) -> Bool { binary != nil || isCI }

    static func require(_ binary: String?, _ variable: String) throws -> String {
        guard let binary else {
            throw PeerError("\(variable) is not set or not executable: run the tests through scripts/test, which installs the pinned CLIs")
        }
        return binary
    }

    private static func executable(_ variable: String) -> String? {
        guard let path = environment[variable], FileManager.default.isExecutableFile(atPath: path) else { return nil }
        return path
    }
}


/// A scripted mock model API (`Tests/Peers/mock_anthropic.py` or `mock_openai.py`) on 127.0.0.1.
final class MockModelAPI: Sendable {
    let process: ChildProcess
    let port: Int
    let logPath: String

    /// Starts the mock and waits for the `PORT <n>` line it prints when it listens.
    static func start(_ script: String) async throws -> MockModelAPI {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-mock-\(UUID().uuidString).log").path
        let process = try ChildProcess.spawn(
            executable: Peers.python, arguments: ["\(Peers.repoRoot)/Tests/Peers/\(script)", "--port", "0", "--log", log])
        var seen: [UInt8] = []
        for await chunk in process.stdout {
            seen += chunk
            if let newline = seen.firstIndex(of: 0x0A) {
                let line = String(decoding: seen[..<newline], as: UTF8.self)
                guard line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else { break }
                return MockModelAPI(process: process, port: port, logPath: log)
            }
        }
        let status = await process.terminate(grace: .seconds(1))
        throw PeerError("\(script) did not start (\(status)): \(process.stderrTail())")
    }

    private init(process: ChildProcess, port: Int, logPath: String) {
        self.process = process
        self.port = port
        self.logPath = logPath
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func stop() async {
        _ = await process.terminate(grace: .seconds(2))
        try? FileManager.default.removeItem(atPath: logPath)
    }
}

/// A scratch git repository with one commit, removed by `remove()`.
struct ScratchRepository {
    let path: String

    static func make() throws -> ScratchRepository {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-e2e-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try "# scratch\n".write(toFile: "\(path)/README.md", atomically: true, encoding: .utf8)
        // A repository-local identity, as users have one: the commits Nucleic writes are made as it.
        for args in [["init", "-q", "-b", "main"], ["config", "user.name", "Nucleic Tests"], ["config", "user.email", "tests@localhost"],
                     ["add", "README.md"], ["commit", "-qm", "initial"]] {
            try git(args, in: path)
        }
        return ScratchRepository(path: path)
    }

    static func git(_ arguments: [String], in directory: String) throws {
        try TestGit.run(arguments, in: directory)
    }

    func contents(_ file: String) -> String? { try? String(contentsOfFile: "\(path)/\(file)", encoding: .utf8) }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}
