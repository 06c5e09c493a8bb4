#if canImport(Glibc)
import Glibc
#endif
import NucleicAdapters
import NucleicProtocol
import NucleicStore
import NucleicSystem
import Synchronization

extension SessionHost {
    /// How far the store may fall behind a session's transcript before its journal reader waits.
    static let unrecordedLimit: Int64 = 2048

    /// What adopting a session's shim came to.
    enum Adoption {
        /// There is no live shim: the agent is gone.
        case gone
        /// Adopted: the session is live again.
        case adopted
        /// Another daemon holds the shim: leave the session alone.
        case heldElsewhere
    }

    /// Adopts every live shim of a session that is not archived; returns what came of each tried.
    func adoptShims() async throws -> [SessionID: Adoption] {
        var outcomes: [SessionID: Adoption] = [:]
        for record in try await store.sessions(matching: SessionFilter(includeArchived: false)) {
            let files = ShimFiles(folder: SessionFolder(home: configuration.home.path, session: record.id).path)
            guard access(files.socket, F_OK) == 0 else { continue }
            outcomes[record.id] = await adopt(record, files)
        }
        return outcomes
    }

    func adopt(_ record: SessionRecord, _ files: ShimFiles) async -> Adoption {
        let link: ShimLink
        do {
            guard let found = try ShimLink.adopt(files) else {
                // Nothing listens there: the shim is gone. Its socket file need not be tried again.
                unlink(files.socket)
                return .gone
            }
            link = found
        } catch {
            HostLog.warning("session \(record.id): \(error)")
            return .heldElsewhere
        }
        do {
            let header = try RawJournal.readHeader(path: files.journal)
            // The transcript as the previous daemon left it (repaired on open), through the same storage.
            let storage = try FileSessionStorage(folder: SessionFolder(path: files.folder), header: header, ownsJournal: false)
            try await reportRepairs(record, storage: storage)
            let transcript = try storage.events(from: 1)
            storage.close()
            // This agent's approvals, in order: those whose line is in its part of the journal.
            let approvalIDs = transcript.compactMap { event -> ApprovalID? in
                guard case .approvalRequested(let request) = event.event, let offset = event.rawOffset, offset >= link.journalStart else { return nil }
                return request.id
            }
            try await attach(record.id, codecName: header.backend, header: header, launch: nil, options: nil, status: record.status,
                             projectID: record.projectID, worktree: record.worktreePath ?? files.folder, approvalIDs: approvalIDs)
            guard let session = live[record.id]?.session else { return .gone }
            statuses[record.id] = record.status
            // What the store missed of the transcript (the previous daemon died before its pump stored it).
            let missed = transcript.filter { $0.seq > record.lastSeq }
            for start in stride(from: 0, to: missed.count, by: Session.batchSize) {
                await self.record(record.id, Array(missed[start..<min(start + Session.batchSize, missed.count)]))
            }
            await session.adopt(link, transcript: transcript)
            HostLog.info("session \(record.id): adopted its shim (agent \(link.agentPID))")
            return .adopted
        } catch {
            HostLog.warning("session \(record.id): could not adopt its shim: \(error)")
            link.close()
            return .gone
        }
    }

    /// Suspends until the store has recorded `id`'s events up to `seq`.
    func untilRecorded(_ id: SessionID, _ seq: Int64) async {
        guard recordedSeq[id, default: 0] < seq, live[id] != nil else { return }
        await withCheckedContinuation { continuation in
            recordedWaiters[id, default: []].append((seq, continuation))
        }
    }

    func releaseRecordedWaiters(_ id: SessionID) {
        guard let waiters = recordedWaiters[id], !waiters.isEmpty else { return }
        let recorded = recordedSeq[id, default: 0]
        var left: [(seq: Int64, continuation: CheckedContinuation<Void, Never>)] = []
        for waiter in waiters {
            if waiter.seq <= recorded { waiter.continuation.resume() } else { left.append(waiter) }
        }
        recordedWaiters[id] = left
    }

    /// Lets every held-back reader go (the host is shutting down).
    func releaseAllRecordedWaiters() {
        for waiters in recordedWaiters.values { for waiter in waiters { waiter.continuation.resume() } }
        recordedWaiters = [:]
    }
}

/// Approval ids for a codec: the given ones first, in order (a journal replayed after an adoption
/// meets its approvals again and must give them the ids the transcript has), then new ones.
final class ApprovalIDSource: Sendable {
    private let queue: Mutex<[ApprovalID]>

    init(_ ids: [ApprovalID]) { queue = Mutex(ids) }

    func next() -> ApprovalID {
        queue.withLock { $0.isEmpty ? ApprovalID.make() : $0.removeFirst() }
    }
}
