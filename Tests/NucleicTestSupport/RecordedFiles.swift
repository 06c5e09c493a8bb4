import Foundation
import NucleicProtocol

/// The files a recorded run left changed, read from what the agent *reported* (not from the
/// tool inputs the replay agent works from): Claude's `tool_use_result` of a Write (the file's
/// content), Codex's `turn/diff/updated` (the blob id each file ended a turn with). Paths are
/// relative to the recording's working folder; the value is the git blob id, nil for a file
/// the run deleted.
public enum RecordedFiles {
    public static func changes(_ fixture: Fixture) throws -> [String: String?] {
        var cwd: String?
        var out: [String: String?] = [:]
        for record in fixture.records {
            guard let json = try? JSONParser.parse(record.line) else { continue }
            if fixture.backend == "claude" {
                if json["type"]?.stringValue == "system", json["subtype"]?.stringValue == "init" { cwd = json["cwd"]?.stringValue }
                guard record.direction == "out", json["type"]?.stringValue == "user", let result = json["tool_use_result"],
                    ["create", "update"].contains(result["type"]?.stringValue ?? ""), let path = result["filePath"]?.stringValue,
                    let content = result["content"]?.stringValue else { continue }
                out[relative(path, cwd)] = try blobID(content)
            } else {
                if record.direction == "in", json["method"]?.stringValue == "thread/start" { cwd = json["params"]?["cwd"]?.stringValue }
                guard json["method"]?.stringValue == "turn/diff/updated", let diff = json["params"]?["diff"]?.stringValue else { continue }
                var path: String?
                for line in diff.split(separator: "\n") {
                    if line.hasPrefix("diff --git a/"), let b = line.range(of: " b/") { path = String(line[b.upperBound...]) }
                    if line.hasPrefix("index "), let path {
                        let ids = line.dropFirst(6).split(separator: " ")[0].split(separator: ".")
                        let new = String(ids.last ?? "")
                        out[path] = new.allSatisfy { $0 == "0" } ? .some(nil) : .some(new)
                    }
                }
            }
        }
        return out
    }

    /// Every regular file under `folder` (not `.git`), relative path → content.
    public static func read(_ folder: String) throws -> [String: String] {
        var files: [String: String] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)
        while let path = enumerator?.nextObject() as? String {
            if path == ".git" || path.hasPrefix(".git/") { enumerator?.skipDescendants(); continue }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
            files[path] = try String(contentsOfFile: folder + "/" + path, encoding: .utf8)
        }
        return files
    }

    /// `git hash-object` of `content`.
    public static func blobID(_ content: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        process.arguments = ["hash-object", "--stdin"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(content.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func relative(_ path: String, _ cwd: String?) -> String {
        guard let cwd, path.hasPrefix(cwd + "/") else { return path }
        return String(path.dropFirst(cwd.count + 1))
    }
}
