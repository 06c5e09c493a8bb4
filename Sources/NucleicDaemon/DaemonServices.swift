import NucleicRuntime
import NucleicSockets
import NucleicSync
import Synchronization

/// The orphan reaper (this process is a child subreaper): at shutdown, after everything else has
/// stopped, collects what of the agents' groups was orphaned to us and stops the reaper thread.
struct ReaperService: Service {
    let reaper: Reaper
    private let stopped = Latch()

    init(reaper: Reaper) { self.reaper = reaper }

    var name: String { "reaper" }

    func run() async { await stopped.wait() }

    func shutdown() async {
        Reaper.reapOrphans()
        reaper.stop()
        stopped.open()
    }
}

/// The local socket: serves every connection until the listener closes.
struct LocalSocketService: Service {
    let server: LocalServer

    var name: String { "local socket" }

    func run() async { await server.run() }

    /// Stops accepting; the connections still open are closed and their handlers return.
    func shutdown() async { server.listener.close() }
}

/// The session host: its work runs in its own actors; at shutdown it stops every agent (with
/// `killSessions`) or leaves them to their shims, and closes the files.
struct SessionHostService: Service {
    let host: SessionHost
    let killSessions: SharedFlag
    private let stopped = Latch()

    init(host: SessionHost, killSessions: SharedFlag) {
        self.host = host
        self.killSessions = killSessions
    }

    var name: String { "session host" }

    func run() async { await stopped.wait() }

    func shutdown() async {
        let kill = killSessions.value
        await host.shutdown(killSessions: kill, killReason: kill ? "the agent was killed by `nucleic stop-daemon --kill-sessions`" : nil)
        stopped.open()
    }
}

/// Paired devices over TCP: serves until the listener closes, then closes the open connections.
struct RemoteService: Service {
    let server: RemoteServer

    var name: String { "remote listener" }

    func run() async { await server.run() }

    func shutdown() async { server.close() }
}

/// A flag shared between the daemon and one of its services.
final class SharedFlag: Sendable {
    private let state = Mutex(false)

    var value: Bool {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
