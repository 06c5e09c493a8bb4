#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicStore
import NucleicSystem

/// Repairs are said, not silent: whatever opening a session's transcript or raw journal cut or
/// set aside (docs/STORE.md, "Repair on open") is reported three ways — a daemon log line, a
/// `notice` event (code `repaired`) in the session's transcript, and a line in the session's
/// `repairs.jsonl`, which `nucleic doctor` lists.
///
/// Repair runs when the daemon starts (every session that is not archived and has no live shim)
/// and when it adopts a shim, so the store's count of events and what a reader gets agree from
/// the start, not from the session's next write.
extension SessionHost {
    /// The notice code of a repair.
    static let repairedCode = "repaired"

    /// Opens (so repairs) the transcript and, when no shim holds it, the raw journal of every
    /// session not archived that `skip` does not name; reports what was repaired.
    func repairAtStart(skipping skip: Set<SessionID>) async throws {
        for record in try await store.sessions(matching: SessionFilter(includeArchived: false)) where !skip.contains(record.id) {
            let folder = SessionFolder(home: configuration.home.path, session: record.id)
            guard folder.exists else { continue }
            var found: [(String, RepairReport)] = []
            if access(folder.rawJournalPath, F_OK) == 0 {
                do {
                    let journal = try RawJournal(folder: folder.path, creatingWith: nil)
                    found.append((RawJournal.fileName, journal.repair))
                    journal.close()
                } catch where error.code == .locked {
                    // A shim still writes it (one this daemon could not adopt): it is the shim's.
                } catch {
                    HostLog.warning("session \(record.id): \(error.message)")
                }
            }
            let transcript: Transcript
            do { transcript = try folder.openTranscript() } catch {
                HostLog.warning("session \(record.id): cannot open its transcript: \(error.message); `nucleic doctor` lists what is damaged")
                continue
            }
            defer { transcript.close() }
            found.append((Transcript.fileName, transcript.repair))
            try await report(record, folder: folder, found, append: { events throws in try transcript.append(events) },
                             lastSeq: { transcript.lastSeq })
        }
    }

    /// Reports the repairs opening `storage` made (adoption opens the transcript that way).
    func reportRepairs(_ record: SessionRecord, storage: FileSessionStorage) async throws {
        try await report(record, folder: storage.folder, [(Transcript.fileName, storage.transcriptRepair)],
                         append: { events throws in try storage.appendEvents(events) }, lastSeq: { storage.lastSeq })
    }

    private func report(_ record: SessionRecord, folder: SessionFolder, _ found: [(String, RepairReport)],
                        append: ([SequencedEvent]) throws -> Void, lastSeq: () -> Int64) async throws {
        let repaired = found.filter { !Self.isIndexOnly($0.1) && !$0.1.isClean }
        for (file, report) in found where Self.isIndexOnly(report) {
            HostLog.info("session \(record.id): rebuilt \(file)'s index from seq \(report.indexRewrittenFrom ?? 1)")
        }
        if !repaired.isEmpty {
            let now = Timestamp.now()
            var seq = lastSeq()
            var events: [SequencedEvent] = []
            for (file, report) in repaired {
                let text = Self.describe(file, report)
                HostLog.warning("session \(record.id): repaired \(text)")
                Self.appendRepairLine(folder, file: file, report, at: now)
                seq += 1
                events.append(SequencedEvent(seq: seq, ts: now, event: .notice(level: .warning, message: "repaired \(text)", code: Self.repairedCode)))
            }
            try append(events)
        }
        // The store counts what the transcript holds, even when repair cut some of it.
        let last = lastSeq()
        if record.lastSeq != last {
            _ = try await store.modifySession(id: record.id) { $0.lastSeq = last }
        }
    }

    /// Only the index was rewritten: it is derived (a backup need not hold it), nothing was lost.
    static func isIndexOnly(_ report: RepairReport) -> Bool {
        report.indexRewrittenFrom != nil && report.lengthBefore == report.lengthAfter && report.damagedLines == 0
    }

    /// `transcript.jsonl: cut 17 torn bytes; 2 damaged lines kept in …` (what a person reads).
    static func describe(_ file: String, _ report: RepairReport) -> String {
        var parts: [String] = []
        if report.tornBytes > 0 { parts.append("cut \(report.tornBytes) bytes of an unfinished last line") }
        if report.damagedLines > 0 {
            parts.append("set aside \(report.damagedLines) damaged line\(report.damagedLines == 1 ? "" : "s")\(report.savedTo.map { " in \($0)" } ?? "")")
        }
        if report.incompleteGroupEvents > 0 {
            parts.append("cut \(report.incompleteGroupEvents) event\(report.incompleteGroupEvents == 1 ? "" : "s") of an unfinished group (read again from the raw journal)")
        }
        if parts.isEmpty { parts.append("length \(report.lengthBefore) → \(report.lengthAfter) bytes") }
        return "\(file): " + parts.joined(separator: "; ")
    }

    /// One JSON line in the session's `repairs.jsonl` (0600, appended): what `nucleic doctor` lists.
    static func appendRepairLine(_ folder: SessionFolder, file: String, _ report: RepairReport, at: Timestamp) {
        var fields: [JSONObject.Entry] = [
            .init("at", .string(at.description)), .init("file", .string(file)), .init("tornBytes", .int(report.tornBytes)),
            .init("damagedLines", .int(Int64(report.damagedLines))), .init("incompleteGroupEvents", .int(Int64(report.incompleteGroupEvents))),
            .init("lengthBefore", .int(report.lengthBefore)), .init("lengthAfter", .int(report.lengthAfter)),
            .init("message", .string(describe(file, report))),
        ]
        if let saved = report.savedTo { fields.append(.init("savedTo", .string(saved))) }
        let line = Array((JSONWriter.string(.object(JSONObject(fields))) + "\n").utf8)
        let path: String = folder.path + "/" + repairLogName
        let flags: Int32 = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC
        let fd = Glibc.open(path, flags, mode_t(0o600))
        guard fd >= 0 else {
            HostLog.warning("cannot record the repair in \(folder.path)/\(repairLogName): \(String(cString: strerror(errno)))")
            return
        }
        _ = line.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        _ = fdatasync(fd)
        Glibc.close(fd)
    }

    /// The session folder's record of repairs made.
    public static let repairLogName = "repairs.jsonl"
}
