import Foundation
import NucleicProtocol
#if canImport(Glibc)
import Glibc
#endif

/// Ends what a failed test left of its sessions' shims: a shim outlives its host by design, so a
/// test that fails before its host ends its sessions leaves a shim and its agent running, and
/// they hold this test process's stdout and stderr open (the test runner then waits for them).
///
/// Each shim folder's `shim.json` names the shim and the agent. Those pids may have come round
/// again to another test's processes since: a process that started after `shim.json` was written
/// is not the one it names. A group whose leader is gone is still the agent's (the kernel gives
/// no process a pid that is a live group's id).
public enum LeftoverShims {
    /// Ends the shim and agent group of the shim folder `folder`.
    public static func end(folder: String) {
        let info = folder + "/shim.json"
        guard let text = try? String(contentsOfFile: info, encoding: .utf8), let json = try? JSONParser.parse(text),
              let written = (try? FileManager.default.attributesOfItem(atPath: info))?[.modificationDate] as? Date else { return }
        func named(_ identity: ProcessIdentity) -> Bool { identity.startedAt.map { $0 <= written.addingTimeInterval(1) } ?? false }
        if let agent = json["agentPID"]?.intValue.map(Int32.init), agent > 0 {
            if let leader = ProcessIdentity(agent) {
                if named(leader) { kill(-agent, SIGKILL) }
            } else {
                kill(-agent, SIGKILL)
            }
        }
        if let shim = json["shimPID"]?.intValue.map(Int32.init), let identity = ProcessIdentity(shim), named(identity) {
            identity.signal(SIGKILL)
        }
    }

    /// Ends the shims of every session under a Nucleic home (`<home>/sessions/*`).
    public static func end(home: String) {
        let sessions = (try? FileManager.default.contentsOfDirectory(atPath: home + "/sessions")) ?? []
        for session in sessions { end(folder: home + "/sessions/" + session) }
    }
}
