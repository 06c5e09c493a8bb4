#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import NucleicCommandLine
import NucleicSystem

/// `nucleic doctor [--json]`: what the data folder's state is, read without changing anything
/// and without the daemon: what repairs were made (each session's `repairs.jsonl`), what is
/// damaged (lines a repair set aside, files that end in an unfinished line now), files and
/// folders others can reach, stale shims and sockets, and how each live agent is contained.
/// Exits 1 when something needs a person (damaged, wrong modes, stale), else 0.
enum DoctorCommand {
    static var usage: String { NucleicCommands.help("doctor") }

    /// The help's description (NucleicCommands).
    static let description = """
        Reads the data folder ($NUCLEIC_HOME) and lists, changing nothing:
          repaired   what the daemon repaired at a start or adoption (torn lines cut, damaged
                     lines set aside), per session
          damaged    lines set aside by a repair (*.damaged-*: look, then remove), and session
                     files that end in an unfinished line now (the next daemon start repairs them)
          modes      files and folders its group or others can reach (should be 0600 / 0700;
                     the daemon tightens them when it starts)
          stale      shims that are gone but left their files, sockets nothing listens on
          shims      each live shim: its agent, and whether a cgroup or the subreaper holds it
        Exits 1 when something is damaged, loose or stale.
        """

    struct Finding {
        var section: String
        var session: String?
        var text: String
        var json: JSONValue {
            var fields: [JSONObject.Entry] = [.init("kind", .string(section))]
            if let session { fields.append(.init("sessionID", .string(session))) }
            fields.append(.init("message", .string(text)))
            return .object(JSONObject(fields))
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], boolean: ["json"], usage: usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: usage) }
        let home = NucleicHome.fromEnvironment()
        guard access(home.path, F_OK) == 0 else {
            throw CommandError(message: "there is no data folder at \(home.path) (set NUCLEIC_HOME to the one to examine)")
        }
        let findings = examine(home)
        if parsed.flag("json") {
            Output.standardOutput(JSONWriter.string(.array(findings.map(\.json))))
        } else {
            Output.standardOutput(render(findings, home: home))
        }
        return findings.contains { ["damaged", "modes", "stale"].contains($0.section) } ? 1 : 0
    }

    static func render(_ findings: [Finding], home: NucleicHome) -> String {
        var lines = ["nucleic doctor: \(home.path)"]
        for section in ["repaired", "damaged", "modes", "stale", "shims"] {
            let mine = findings.filter { $0.section == section }
            lines.append("")
            lines.append("\(section):" + (mine.isEmpty ? " none" : ""))
            for finding in mine { lines.append("  " + (finding.session.map { "session \($0): " } ?? "") + finding.text) }
        }
        return lines.joined(separator: "\n")
    }

    static func examine(_ home: NucleicHome) -> [Finding] {
        var findings: [Finding] = []
        for session in entries(home.sessions).sorted() {
            let folder = home.sessions + "/" + session
            findings += sessionFindings(session, folder: folder)
        }
        for loose in PrivateFiles.loose(under: home.path) {
            findings.append(Finding(section: "modes", text: loose.description))
        }
        let socket = home.run + "/nucleic.sock"
        if access(socket, F_OK) == 0, !listens(socket) {
            findings.append(Finding(section: "stale", text: "\(socket): nothing listens there (no daemon); the next daemon replaces it"))
        }
        return findings
    }

    static func sessionFindings(_ session: String, folder: String) -> [Finding] {
        var findings: [Finding] = []
        // Repairs made, as the daemon recorded them.
        if let text = read(folder + "/" + SessionHost.repairLogName) {
            for line in text.split(separator: "\n") {
                let json = try? JSONParser.parse(String(line))
                let message = json?["message"]?.stringValue ?? String(line)
                let at = json?["at"]?.stringValue.map { " (\($0))" } ?? ""
                findings.append(Finding(section: "repaired", session: session, text: message + at))
            }
        }
        for name in entries(folder).sorted() where name.contains(".damaged-") {
            var st = stat()
            let size = stat(folder + "/" + name, &st) == 0 ? " (\(st.st_size) bytes)" : ""
            findings.append(Finding(section: "damaged", session: session,
                                    text: "\(folder)/\(name)\(size): lines a repair set aside; look at them, then remove the file"))
        }
        for name in ["transcript.jsonl", "raw.jsonl"] where endsTorn(folder + "/" + name) {
            findings.append(Finding(section: "damaged", session: session,
                                    text: "\(name) ends in an unfinished line (the daemon repairs it when it starts or adopts the session)"))
        }
        // The shim: live, or gone leaving its files.
        let files = ShimFiles(folder: folder)
        if let info = read(files.info).flatMap({ try? JSONParser.parse($0) }) {
            let shimPID = info["shimPID"]?.intValue.map { Int32($0) } ?? -1
            let agentPID = info["agentPID"]?.intValue ?? -1
            if shimPID > 0, isShim(shimPID) {
                let containment = info["containment"]?.stringValue ?? "subreaper"
                findings.append(Finding(section: "shims", session: session, text: "shim \(shimPID), agent \(agentPID), contained by \(containment)"))
            } else {
                findings.append(Finding(section: "stale", session: session,
                                        text: "\(files.info) names shim \(shimPID), which is not running (the shim was killed); the next daemon marks the session for resuming"))
            }
        }
        if access(files.socket, F_OK) == 0, !listens(files.socket) {
            findings.append(Finding(section: "stale", session: session, text: "\(files.socket): nothing listens there; the next daemon removes it"))
        }
        return findings
    }

    // MARK: Reading

    static func entries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    static func read(_ path: String) -> String? {
        (try? WholeFile.read(path, limit: 1 << 24))?.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The file is not empty and its last byte is not a newline.
    static func endsTorn(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size > 0 else { return false }
        var byte: UInt8 = 0
        return pread(fd, &byte, 1, st.st_size - 1) == 1 && byte != 0x0A
    }

    static func isShim(_ pid: Int32) -> Bool {
        guard let cmdline = read("/proc/\(pid)/cmdline") else { return false }
        return cmdline.split(separator: "\0").dropFirst().first == "shim"
    }

    /// Something accepts connections on the Unix socket at `path`.
    static func listens(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return true }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return true }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return rc == 0
    }
}
