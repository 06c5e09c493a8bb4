#if canImport(Glibc)
import Glibc
#endif
public import NucleicProtocol

/// Idle agents cost nothing: an agent whose turn is over and who waits for nothing (no approval,
/// no question pending) is ended after `Configuration.idleTimeout` without activity, and the
/// next `send` resumes it through its backend's own resume (Claude `--resume`, Codex
/// `thread/resume`), as after a restart. The transcript gains one notice; the status stays.
extension SessionHost {
    /// What the transcript says when an idle agent is ended.
    static let idleNoticeCode = "idleStopped"

    func startIdleReaper() {
        guard let timeout = configuration.idleTimeout, idleReaper == nil else { return }
        // Checked a few times per timeout, at most every 30 s: a session is ended at most a
        // quarter of the timeout late.
        let period = min(timeout / 4, .seconds(30))
        idleReaper = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: period)
                guard let self else { return }
                await self.reapIdle(olderThan: timeout)
            }
        }
    }

    /// Ends the agents idle for `timeout` or longer, now; returns their sessions. Sessions that
    /// cannot be resumed (a replayed recording, a backend without resume, no native session id
    /// yet) are never ended.
    @discardableResult
    public func reapIdle(olderThan timeout: Duration) async -> [SessionID] {
        let now = ContinuousClock.now
        var reaped: [SessionID] = []
        for (id, entry) in live {
            let session = entry.session
            guard await session.isRunning, [.finished, .awaitingInput].contains(await session.status), await session.pendingCount == 0,
                now - (lastActivity[id] ?? now) >= timeout, await canResume(id)
            else { continue }
            let minutes = Int((Double(timeout.components.seconds) / 60).rounded())
            let idle = timeout >= .seconds(60) ? "\(minutes) minute\(minutes == 1 ? "" : "s")" : "\(timeout.components.seconds) s"
            await session.stop(reason: "the agent was idle for \(idle) and was ended to free its memory; the next `nucleic send` resumes it",
                               code: Self.idleNoticeCode)
            reaped.append(id)
        }
        return reaped
    }

    private func canResume(_ id: SessionID) async -> Bool {
        guard let record = try? await store.session(id: id), record.backend != "replay", record.nativeSessionID != nil else { return false }
        return configuration.adapters[record.backend]?.capabilities.canResume ?? false
    }
}

/// The idle time before an agent is ended: `--idle-timeout`, else `NUCLEIC_IDLE_TIMEOUT`, else
/// 10 minutes. (A configuration file can feed `parse` the same text later.)
public enum IdleTimeout {
    public static let `default`: Duration = .seconds(600)

    /// `90`, `90s`, `10m`, `1h`; `0` or `off` turns idle ending off (nil). Nil text: the default.
    public static func parse(_ text: String?) throws(SessionError) -> Duration? {
        guard var text = text?.lowercased() else { return Self.default }
        text = String(text.filter { !$0.isWhitespace })
        if text == "off" || text == "never" || text == "0" { return nil }
        var unit: Int64 = 1
        if let last = text.last, "smh".contains(last) {
            unit = last == "s" ? 1 : last == "m" ? 60 : 3600
            text.removeLast()
        }
        guard let value = Int64(text), value > 0, value < Int64.max / 3600 else {
            throw SessionError(.badMessage, "idle timeout '\(text)' is not a duration: give seconds (600), minutes (10m) or hours (1h), or off")
        }
        return .seconds(value * unit)
    }
}
