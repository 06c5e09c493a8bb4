import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A peer process a test talks to (a protocol server from Tests/Peers, a bus daemon): started
/// with a scratch folder of its own, ready once it has printed its first line on stdout (its
/// port, address, or a JSON object saying where it listens), and stopped with everything it
/// started.
///
/// `stop` sends SIGKILL, not SIGTERM: a child spawned from one of the test's concurrency threads
/// inherits that thread's blocked signal mask and would ignore SIGTERM (and `waitUntilExit` spin).
public final class PeerProcess: @unchecked Sendable {  // set up in init and `attach`, ended in stop()
    /// The scratch folder, removed by `stop`.
    public let folder: String
    /// The first line the peer printed, without its newline.
    public let readyLine: String
    private var processes: [Process]

    /// Starts `executable` with the arguments `arguments(folder)` gives, and waits for its first
    /// line. `name` labels the scratch folder (`nucleic-<name>-…`).
    public init(_ name: String, executable: String, arguments: (String) -> [String], environment: [String: String]? = nil) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-\(name)-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments(folder)
        if let environment { process.environment = environment }
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        processes = [process]
        var text = ""
        while !text.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        readyLine = text.split(separator: "\n").first.map(String.init) ?? ""
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

    /// Starts another process that lives and is stopped with this one (output discarded).
    public func attach(executable: String, arguments: [String], environment: [String: String]? = nil) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        processes.append(process)
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
        for process in processes.reversed() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: folder)
    }
}
