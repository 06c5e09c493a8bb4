import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A peer process a test talks to (a protocol server from Tests/Peers, a bus daemon): started
/// with a scratch folder of its own, ready once it has printed its first line on stdout (its
/// port, address, or a JSON object saying where it listens), and stopped with everything it
/// started. Its stderr is kept in the folder (`stderr.txt`) for the failure messages
/// (`diagnosis`); a peer that ends before its first line is an error that shows it.
///
/// `stop` sends SIGKILL, not SIGTERM: a child spawned from one of the test's concurrency threads
/// inherits that thread's blocked signal mask and would ignore SIGTERM (and `waitUntilExit` spin).
/// It signals through each process's `ProcessIdentity`, never a bare pid.
public final class PeerProcess: @unchecked Sendable {  // set up in init and `attach`, ended in stop()
    /// The scratch folder, removed by `stop`.
    public let folder: String
    /// The first line the peer printed, without its newline.
    public let readyLine: String
    private let name: String
    private var processes: [(process: Process, identity: ProcessIdentity?)]

    /// Starts `executable` with the arguments `arguments(folder)` gives, and waits for its first
    /// line. `name` labels the scratch folder (`nucleic-<name>-…`).
    public init(_ name: String, executable: String, arguments: (String) -> [String], environment: [String: String]? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-\(name)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments(folder)
        if let environment { process.environment = environment }
        self.name = name
        let out = Pipe()
        process.standardOutput = out
        let errors = folder + "/stderr.txt"
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errors))
        try process.run()
        let identity = ProcessIdentity(process.processIdentifier)
        processes = [(process, identity)]
        var text = ""
        while !text.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        guard let first = text.split(separator: "\n", omittingEmptySubsequences: false).first, text.contains("\n") else {
            let errors = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            if identity?.signal(SIGKILL) == true { process.waitUntilExit() }
            try? FileManager.default.removeItem(atPath: folder)
            throw PeerFailure("the \(name) peer ended before saying where it listens (it printed \(text.debugDescription)); its stderr: \(errors)")
        }
        readyLine = String(first)
    }

    /// Starts a peer script of `Tests/Peers` with `python`.
    public convenience init(_ name: String, python: String, script: String, arguments: (String) -> [String]) throws {
        let path = Fixture.root.deletingLastPathComponent().appendingPathComponent("Tests/Peers/\(script)").path
        try self.init(name, executable: python, arguments: { [path] + arguments($0) })
    }

    /// The ready line read as a JSON object (empty if it is not one).
    public var readyObject: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(readyLine.utf8))) as? [String: Any] ?? [:]
    }

    /// The port the ready line names (its `port`, or the whole line as a number); an error that
    /// shows the line and the peer's stderr when it names none.
    public func readyPort() throws -> Int {
        if let port = readyObject["port"] as? Int ?? Int(readyLine.trimmingCharacters(in: .whitespaces)), port > 0 { return port }
        let failure = PeerFailure("the \(name) peer named no port in its first line \(readyLine.debugDescription): \(diagnosis)")
        stop()
        throw failure
    }

    /// Starts another process that lives and is stopped with this one (output discarded).
    public func attach(executable: String, arguments: [String], environment: [String: String]? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: folder + "/stderr.txt"))
        try process.run()
        processes.append((process, ProcessIdentity(process.processIdentifier)))
    }

    /// Whether the first process (the peer itself) still runs.
    public var isRunning: Bool { processes.first?.identity?.exists == true && processes.first!.process.isRunning }

    /// For failure messages: whether the peer still runs, and what it wrote on stderr.
    public var diagnosis: String {
        let errors = (try? String(contentsOfFile: folder + "/stderr.txt", encoding: .utf8)) ?? ""
        let state = isRunning ? "still running" : "not running"
        return "the \(name) peer (\(processes.first.map { "pid \($0.process.processIdentifier)" } ?? "never started")) is \(state); its stderr: \(errors.isEmpty ? "(empty)" : String(errors.suffix(2000)))"
    }

    /// The objects of a JSON-lines file in the folder (a peer's request log), oldest first; none
    /// while the file does not exist.
    public func jsonLines(_ file: String) throws -> [[String: Any]] {
        let text = (try? String(contentsOfFile: folder + "/" + file, encoding: .utf8)) ?? ""
        return try text.split(separator: "\n").map { line in
            guard let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                throw FixtureError("\(file) of the \(folder) peer has a line that is not a JSON object: \(line)")
            }
            return object
        }
    }

    /// Waits until the JSON-lines file has at least `count` objects, or `seconds` passed; them.
    public func waitForJSONLines(_ file: String, _ count: Int, seconds: Double = 20) async throws -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let all = try jsonLines(file)
            if all.count >= count || Date() > deadline { return all }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Kills every process (the attached ones first), waits for them, removes the folder.
    public func stop() {
        for (process, identity) in processes.reversed() {
            if identity?.signal(SIGKILL) == true { process.waitUntilExit() }
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}
