#if canImport(Glibc)
import Glibc
#endif
import Synchronization
public import NucleicStore
public import NucleicProtocol

/// A session's raw journal and transcript on disk (`sessions/<id>/`), as the Session actor's
/// `SessionStorage`.
///
/// Durability: raw lines are written without a sync each; before events are appended the
/// journal is synced, then the transcript batch is written and synced. So a transcript line
/// never points at raw bytes that could be lost, and a crash loses at most raw lines that no
/// event refers to yet (docs/STORE.md).
///
/// With `ownsJournal: false` (a session under a shim) the journal is the shim's: it is created
/// with its header here if missing, then left closed; the shim writes and syncs it, and events
/// only ever point at records the shim has reported durable.
public final class FileSessionStorage: SessionStorage, Sendable {
    // The store's file classes are not Sendable; every use is under this mutex.
    private let files: Mutex<(journal: RawJournal?, transcript: Transcript)>
    public let folder: SessionFolder

    public init(folder: SessionFolder, header: RawJournal.Header, ownsJournal: Bool = true) throws(StoreError) {
        self.folder = folder
        var journal: RawJournal?
        if ownsJournal {
            journal = try folder.openRawJournal(creatingWith: header)
        } else if access(folder.rawJournalPath, F_OK) != 0 {
            try folder.openRawJournal(creatingWith: header).close()
        }
        let transcript = try folder.openTranscript()
        files = Mutex((journal, transcript))
    }

    public func appendRaw(_ direction: RawDirection, line: [UInt8], t: Double) throws -> Int64 {
        let dir: RawJournal.Direction = switch direction {
        case .out: .out
        case .in: .in
        case .err: .err
        }
        return try files.withLock { files throws(StoreError) -> Int64 in
            guard let journal = files.journal else {
                throw StoreError(.closed, "\(folder.rawJournalPath) belongs to the session's shim", path: folder.rawJournalPath)
            }
            return try journal.append(direction: dir, line: line, t: t, sync: false)
        }
    }

    public func appendEvents(_ events: [SequencedEvent]) throws {
        try files.withLock { files throws(StoreError) in
            try files.journal?.sync()
            try files.transcript.append(events, sync: true)
        }
    }

    /// What opening the transcript repaired (docs/STORE.md, "Repair on open").
    public var transcriptRepair: RepairReport {
        files.withLock { $0.transcript.repair }
    }

    public var lastSeq: Int64 {
        files.withLock { $0.transcript.lastSeq }
    }

    /// Events from `seq` on, read from the transcript as it is now: all of them, or the first
    /// `limit`.
    public func events(from seq: Int64, limit: Int? = nil) throws -> [SequencedEvent] {
        try files.withLock { files throws(StoreError) -> [SequencedEvent] in
            let cursor = try files.transcript.read(from: seq)
            if let limit { return try cursor.collect(limit: limit) }
            return try cursor.collect()
        }
    }

    public func close() {
        files.withLock { files in
            files.journal?.close()
            files.transcript.close()
        }
    }
}
