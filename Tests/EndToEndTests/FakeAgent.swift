import Foundation
import NucleicHarness

/// A shell script standing in for an agent CLI, for what the real ones cannot be made to do on
/// cue: start children of its own, die when told, leave orphans. It speaks just enough of Claude
/// Code's stream-json (a `system/init` line) to run as the `claude` backend through
/// `NUCLEIC_CLAUDE_BIN`.
///
/// It starts a background job (which ignores SIGINT, as shells make them) and a grandchild under
/// a subshell, all in its process group, says so on stderr, then reads stdin until EOF. A prompt
/// holding `[[exit]]` makes it exit with code 3 at once, leaving its children running.
/// Its children run as `fake-sleep` (a link to sleep), so they are easy to tell apart in `/proc`.
enum FakeAgent {
    static let name = "fake-agent"
    static let childName = "fake-sleep"

    /// Writes the script (and its `fake-sleep` link) into `folder`; returns the script's path.
    static func install(in folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let sleep = ["/usr/bin/sleep", "/bin/sleep"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/bin/sleep"
        try? FileManager.default.removeItem(atPath: "\(folder)/\(childName)")
        try FileManager.default.createSymbolicLink(atPath: "\(folder)/\(childName)", withDestinationPath: sleep)
        let script = """
            #!/bin/sh
            here=$(dirname "$0")
            "$here/\(childName)" 1000 &
            ( "$here/\(childName)" 1000 & wait ) &
            echo "fake agent $$ started its children" >&2
            printf '{"type":"system","subtype":"init","session_id":"fake-%s","model":"fake","tools":[],"cwd":"%s","permissionMode":"default"}\\n' "$$" "$PWD"
            while IFS= read -r line; do
                case "$line" in
                    *'[[exit]]'*) echo "fake agent $$ exits and leaves its children behind" >&2; exit 3 ;;
                esac
            done

            """
        let path = "\(folder)/\(name)"
        // Written through a close-on-exec descriptor: a child another test spawns meanwhile must
        // not inherit it open for writing, or running the script fails with ETXTBSY.
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw PeerError("cannot create \(path): \(String(cString: strerror(errno)))") }
        let bytes = Array(script.utf8)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { throw PeerError("cannot write \(path)") }
        return path
    }
}
