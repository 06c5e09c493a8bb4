public import NucleicProtocol

// A session's events mirrored into the database, a batch at a time.
extension Store {
    /// What recording a batch of events did: the handle each new approval got, and the events
    /// that could not be recorded (with why), which the rest of the batch did not wait for.
    public struct RecordedBatch: Sendable {
        public var approvalHandles: [ApprovalID: String] = [:]
        public var failures: [(seq: Int64, error: StoreError)] = []
        public init() {}
    }

    /// Mirrors a batch of a session's transcript events into the database in one transaction
    /// (one commit, one trip to the store's thread): approvals asked, answered and withdrawn, the
    /// native session id, status changes, and the last seq. Each event is written in a savepoint
    /// of its own, so one that cannot be recorded (a constraint) is reported in `failures` and
    /// the others are kept; a full disk fails the whole batch (nothing is recorded, the caller
    /// retries it).
    public func record(events: [SequencedEvent], session id: SessionID) throws(StoreError) -> RecordedBatch {
        var batch = RecordedBatch()
        guard let last = events.last else { return batch }
        try db.transaction { () throws(StoreError) in
            for event in events {
                do throws(StoreError) {
                    try recordOne(event, session: id, into: &batch)
                } catch where error.code == .diskFull || error.code == .io {
                    throw error
                } catch {
                    batch.failures.append((event.seq, error))
                }
            }
            do throws(StoreError) { try update(session: id, lastSeq: last.seq, at: last.ts) } catch where error.code == .diskFull || error.code == .io {
                throw error
            } catch {
                batch.failures.append((last.seq, error))
            }
        }
        return batch
    }

    private func recordOne(_ event: SequencedEvent, session id: SessionID, into batch: inout RecordedBatch) throws(StoreError) {
        switch event.event {
        case .approvalRequested(var request):
            request.sessionID = id
            batch.approvalHandles[request.id] = try insert(ApprovalRecord(request: request, sessionID: id, createdAt: event.ts))
        case .approvalResolved(let resolution):
            _ = try resolve(approval: resolution.approvalID, decision: resolution.decision, decidedBy: resolution.decidedBy,
                            decidedByLabel: resolution.decidedByLabel, at: event.ts)
        case .approvalWithdrawn(let approvalID, let reason):
            _ = try withdraw(approval: approvalID, reason: reason, at: event.ts)
        case .sessionStarted(let started):
            if let native = started.nativeSessionID { try update(session: id, nativeSessionID: native, at: event.ts) }
        case .statusChanged(let status, let reason):
            _ = try modifySession(id: id, at: event.ts) { record in
                record.status = status
                if status == .error { record.error = reason }
            }
        default:
            break
        }
    }
}
