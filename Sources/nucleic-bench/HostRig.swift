#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRuntime
import Synchronization

/// One SessionHost on a fresh temporary data folder, with one project on a fresh git repository:
/// what each measured run starts from.
struct HostRig {
    let scratch: Scratch
    let host: SessionHost
    let repository: String

    static func make(_ prefix: String, nucleic: String, maxRunning: Int, speed: String) async throws -> HostRig {
        let scratch = try Scratch.make(prefix)
        let repository = try await scratch.repository("shop")
        let configuration = SessionHost.Configuration(home: scratch.home, adapters: [:], selfExecutable: nucleic,
                                                      maxRunning: maxRunning, replaySpeed: speed)
        let host = try await SessionHost.open(configuration)
        _ = try await host.addProject(path: repository, name: "shop")
        return HostRig(scratch: scratch, host: host, repository: repository)
    }

    /// Starts a replay session on `fixture`.
    func start(_ fixture: String, prompt: String) async throws -> SessionID {
        try await host.startSession(.init(prompt: prompt, backend: "replay", fixture: fixture)).sessionID
    }

    /// Stops every agent, closes the files, and removes the folder unless `keep`.
    func finish(keep: Bool) async {
        await host.shutdown()
        if keep {
            SessionsBenchmark.progress("  kept \(scratch.root)")
        } else {
            await scratch.remove()
        }
    }
}

/// What a client of the host does during a run: listens to every notification, counts events
/// per session, answers each approval "allow" as it comes, and returns once `expected` sessions
/// have finished their turn.
///
/// The stream is taken before any session starts, so nothing is missed; it is read as fast as
/// the host fills it (an unread listener would buffer without bound).
enum HostWatcher {
    /// What the listener saw of each session.
    struct Seen: Sendable {
        var events = 0
        /// The first seq announced: above 1 when the first events never reached listeners.
        var firstSeq: Int64 = 0
    }

    static func start(_ host: SessionHost, expecting expected: Int, counter: SharedCounter? = nil) async -> Task<[SessionID: Seen], any Error> {
        let notifications = await host.listen()
        return Task {
            var counts: [SessionID: Seen] = [:]
            var finished = Set<SessionID>()
            for await notification in notifications {
                switch notification {
                case .events(let id, let events):
                    if counts[id] == nil, let first = events.first { counts[id] = Seen(firstSeq: first.seq) }
                    counts[id]!.events += events.count
                    counter?.add(events.count)
                case .approvalRequested(let request):
                    guard let session = request.sessionID else { continue }
                    do { try await host.respond(request.id, .allow, decidedBy: "user:nucleic-bench", label: nil) } catch {
                        throw BenchError(message: "answering approval \(request.id) of session \(session) failed: \(error)")
                    }
                case .sessionUpdated(let summary):
                    switch summary.status {
                    case .finished:
                        finished.insert(summary.sessionID)
                        if finished.count == expected { return counts }
                    case .error, .awaitingInput, .conflicted:
                        let events = (try? await host.events(summary.sessionID, after: 0)) ?? []
                        let last = events.suffix(4).map { JSONWriter.string($0.event.json) }.joined(separator: "\n  ")
                        throw BenchError(message: "session \(summary.sessionID) ended \(summary.status.rawValue) instead of finished; its last events:\n  \(last)\n(--keep keeps its folder)")
                    default:
                        break
                    }
                case .approvalResolved:
                    break
                }
            }
            throw BenchError(message: "the host stopped before \(expected) sessions finished (\(finished.count) did)")
        }
    }
}

/// A count several tasks read while one adds to it.
final class SharedCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int) { value.add(n, ordering: .relaxed) }
    var current: Int { value.load(ordering: .relaxed) }
}
