#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine
import NucleicRemoteKit
import NucleicRuntime
import NucleicSockets
import NucleicSystem

/// `nucleic watch` (and `nucleic` alone on a terminal): the live view over the daemon's socket,
/// through the same client core as a paired device (`WatchView` on a `Connection`).
enum WatchCommandLine {
    static var usage: String { NucleicCommands.help("watch") }

    /// The help's description (NucleicCommands).
    static let description = """
        The attention-first live view: sessions grouped NEEDS YOU / RUNNING / DONE with what each
        is doing now, its +/− and what waits for you; the oldest approval of the top session
        shown in full on a card (the command, the Write content or Edit diff, the risk and its
        reason, the host rules that match it, what A would add, what the backend can take),
        answered with one key. It stays on that approval until it is answered, whatever arrives
        meanwhile; the list's cursor goes with it. `nucleic` with no arguments on a terminal
        opens it.

        Keys:
          a        allow (a risky approval — unknown, network, hostExec, destructive: a, then !)
          A        allow always, at a scope the host offers (then the scope's number)
          e        edit the input in $EDITOR, then allow it
          d        deny, with an optional message
          1-9      answer the question on the card with that option (o: your own answer)
          ↑ ↓ j k  move between sessions, the card with them (that session's oldest approval);
                   the keys below act on the one marked ›
          n, tab   back to the next approval that needs you
          space    mark the approval on the card; then a allows every marked one (refused
                   when one is risky or a question), d denies them all; esc clears the marks
          s        send a follow-up        i  interrupt
          enter    the transcript          D  the diff against the base
          I        integrate (s squash, r rebase, m merge)
          x        discard (asks; the work stays on its branch)
          ?        help                    q  quit (Ctrl-C too)

        When the daemon stops, the view says so, disables actions and waits for a daemon on the
        socket (it never starts one again); then it resumes every session from its last seq,
        nothing shown twice. It subscribes as a foreground view: the host does not notify about
        what you are watching. When standard output is not a terminal it prints one line per
        change instead. NO_COLOR or --color=never turns colour off.
        """

    static func run(_ arguments: [String]) throws -> Int32 {
        let parsed = try ArgumentParser(arguments, valued: [], usage: usage)
        guard parsed.positionals.isEmpty else { throw UsageError(message: "unexpected argument '\(parsed.positionals[0])'", usage: usage) }
        return try runBlocking { () async throws -> Int32 in
            // Started on demand once, like every command; a daemon that goes later is waited for.
            let first = try await DaemonClient.connect()
            await first.close()
            let path = try SocketPath.resolve(home: NucleicHome.fromEnvironment().path)
            return await WatchView(connection: connection(path: path), terminal: Terminal.open()).run()
        }.get()
    }

    /// The local connection: short backoff (a restarted daemon is back within a second),
    /// every session subscribed, as a foreground view.
    static func connection(path: String) -> Connection {
        var options = Connection.Options(clientName: "nucleic-watch", backoff: Backoff(initialMilliseconds: 100, maxMilliseconds: 1000),
                                         autoSubscribe: (.full, .snapshot))
        options.foreground = true
        return Connection(hostName: "this machine", opening: LocalLink.opener(path: path), options: options)
    }
}
