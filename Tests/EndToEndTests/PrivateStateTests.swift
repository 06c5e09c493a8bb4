import Foundation
import NucleicProtocol
import NucleicRuntime
import NucleicHarness
import NucleicTestSupport
import Testing

/// The data folder is its user's alone: with a pre-made data folder (and `sessions/`) of mode
/// 0755, a stale 0644 file in it, and umask 022, everything the daemon, the shims and the store
/// write is 0600 and every folder 0700; what was looser is tightened, and the log says so.
@Suite struct PrivateStateTests {
    @Test func everyFileIsPrivateWhateverTheUmaskAndTheFoldersThatExisted() async throws {
        let old = umask(0o022)
        defer { umask(old) }
        let fixture = Fixture.root.appendingPathComponent("claude/plain.jsonl").path
        try await DaemonHarness.with(serve: ["--replay-speed", "max"], prepare: { home in
            for folder in [home, home + "/sessions"] {
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                chmod(folder, 0o755)
            }
            FileManager.default.createFile(atPath: home + "/notes.txt", contents: Data("left here\n".utf8))
            chmod(home + "/notes.txt", 0o644)
        }) { d in
            let id = try await d.start("private", ["--backend", "replay", "--fixture", fixture])
            try await d.waitFor(id, ["finished"])
            // Files appear while it runs (the socket, the shim's) and after (the database's WAL).
            let loose = Self.loose(d.home)
            #expect(loose.isEmpty, "group- or world-accessible while running: \(loose)")
            #expect(d.servedLog.contains("made private: \(d.home): mode 0755 tightened to 0700"), "\(d.servedLog)")
            #expect(d.servedLog.contains("made private: \(d.home)/notes.txt: mode 0644 tightened to 0600"), "\(d.servedLog)")
            let names = Set(Self.files(d.home).map { ($0 as NSString).lastPathComponent })
            #expect(names.isSuperset(of: ["nucleic.db", "nucleic.db-wal", "raw.jsonl", "transcript.jsonl", "transcript.idx"]), "\(names.sorted())")
            #expect(try await d.ok(["stop-daemon"]).contains("the daemon stopped"))
            _ = await d.served?.wait(timeout: .seconds(30))
            let after = Self.loose(d.home)
            #expect(after.isEmpty, "group- or world-accessible after the daemon stopped: \(after)")
        }
    }

    /// Every path under `home` (the worktrees' checkouts spared) with its mode, where the group
    /// or others have any access.
    static func loose(_ home: String) -> [String] {
        var found: [String] = []
        for path in [home] + files(home, folders: true) {
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            let type = st.st_mode & S_IFMT
            guard type == S_IFDIR || type == S_IFREG || type == S_IFSOCK else { continue }
            if st.st_mode & 0o077 != 0 { found.append("\(path) \(String(st.st_mode & 0o777, radix: 8))") }
        }
        return found
    }

    static func files(_ home: String, folders: Bool = false) -> [String] {
        var result: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: home) else { return [] }
        while let relative = walker.nextObject() as? String {
            let path = home + "/" + relative
            // worktrees/<project>/<session>/… is a checkout of the user's repository.
            if relative.hasPrefix("worktrees/"), relative.split(separator: "/").count > 3 { continue }
            var isFolder: ObjCBool = false
            FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            if !isFolder.boolValue || folders { result.append(path) }
        }
        return result
    }
}
