import NucleicGit
public import NucleicProtocol
import NucleicStore
import NucleicSystem

extension SessionHost {
    /// Brings a finished session's branch onto its base (docs/INTEGRATION.md): snapshot of the
    /// worktree's uncommitted work, merge / rebase / squash worked out in memory, the base moved
    /// only when nothing of the user's would be overwritten.
    public func integrate(_ request: ClientMsg.Integrate) async throws(SessionError) -> IntegrationOutcome {
        let id = request.sessionID
        let record = try await sessionRecord(id)
        guard !record.status.isArchived else { throw SessionError(.conflict, "session \(id) is \(record.status.rawValue) already") }
        guard let worktree = record.worktreePath else { throw SessionError(.notFound, "session \(id) has no worktree") }
        let project: ProjectRecord
        do {
            guard let p = try await store.project(id: record.projectID) else { throw SessionError(.notFound, "session \(id)'s project is gone") }
            project = p
        } catch let error as SessionError { throw error } catch { throw SessionError(.internalError, "\(error)") }

        if request.resolveWithAgent {
            try await sendInput(id, Self.resolvePrompt(base: record.baseBranch, branch: record.branch))
            return .askedAgent
        }
        // The commits are the user's: no identity, no integration (and nothing changed yet).
        let identity = try await gitIdentity(project.path)
        let attribution = await attribution(record)
        if let session = live[id]?.session, await session.isRunning,
            [.running, .awaitingApproval].contains(await session.status)
        {
            guard request.interrupt else {
                throw SessionError(.conflict, "session \(id) is still working; wait for it, or integrate with --interrupt")
            }
            try await session.interrupt()
            await waitUntilTurnEnds(id)
        }

        let strategy: IntegrationStrategy
        switch request.strategy {
        case "merge": strategy = .merge(noFastForward: request.noFastForward)
        case "rebase": strategy = .rebase
        case "squash":
            let generated = await squashMessage(record, subject: attribution.subject)
            strategy = .squash(message: request.message ?? generated)
        default: throw SessionError(.badMessage, "unknown strategy \(request.strategy) (merge, rebase or squash)")
        }
        let result: IntegrationResult
        do {
            let repository = try await RepositoryActor.open(project.path)
            result = try await repository.integrate(IntegrationRequest(
                sessionID: id.rawValue, branch: record.branch, worktree: worktree, base: record.baseBranch, strategy: strategy,
                author: identity.author, committer: identity.committer, attribution: attribution))
        } catch { throw SessionError(.internalError, "integrating session \(id): \(error)") }

        switch result {
        case .integrated(let integration):
            await finishIntegrated(record, project: project, commit: integration.newTip.description, keep: request.keep)
            return .integrated(commit: integration.newTip.description, fastForward: integration.fastForward, changedPaths: integration.changedPaths)
        case .nothingToIntegrate:
            return .refused(reason: "nothingToIntegrate", paths: [], message: "session \(id) has no changes against \(record.baseBranch)")
        case .conflicted(let paths):
            // The transcript records the change (through the session when it is live); the store
            // is updated here too, so the reply and the summary agree at once.
            await live[id]?.session.mark(.conflicted)
            _ = try? await store.modifySession(id: id) { $0.status = .conflicted }
            if let summary = try? await summary(id) { notify(.sessionUpdated(summary)) }
            return .refused(reason: "conflicted", paths: paths, message:
                "session \(id) conflicts with \(record.baseBranch) in \(paths.count) files; nothing was changed. `nucleic integrate \(id.rawValue.prefix(13)) --resolve-with-agent` asks the agent to resolve them")
        case .dirtyBaseWorktree(let tree, let paths):
            return .refused(reason: "dirtyBase", paths: paths, message:
                "\(tree) has uncommitted changes in files this integration changes; commit or stash them, then integrate again")
        case .baseMoved(let expected, let actual):
            return .refused(reason: "baseMoved", paths: [], message:
                "\(record.baseBranch) kept moving (\(expected.description.prefix(8)) → \(actual.description.prefix(8))); integrate again")
        }
    }

    /// Files two or more live sessions of a project have both touched.
    public func overlap(project reference: String?) async throws(SessionError) -> [String: [SessionID]] {
        let project = try await project(reference)
        let sessions: [SessionRecord]
        do {
            sessions = try await store.sessions(matching: SessionFilter(projectID: project.id)).filter {
                !$0.status.isArchived && $0.worktreePath != nil
            }
        } catch { throw SessionError(.internalError, "\(error)") }
        do {
            let repository = try await RepositoryActor.open(project.path)
            let found = try await repository.overlap(sessions.map {
                SessionWorktree(id: $0.id.rawValue, path: $0.worktreePath!, base: .branch($0.baseBranch))
            })
            return found.mapValues { $0.map { SessionID($0) } }
        } catch { throw SessionError(.internalError, "finding overlaps: \(error)") }
    }

    func finishIntegrated(_ record: SessionRecord, project: ProjectRecord, commit: String, keep: Bool) async {
        let id = record.id
        if let entry = live[id] {
            await entry.session.stop()
            await entry.session.mark(.integrated)
            entry.storage.close()
            live[id] = nil
            forgetAwaitingPerson(id)
        }
        statuses[id] = nil
        if !keep {
            do {
                let repository = try await RepositoryActor.open(project.path)
                try await repository.removeWorktree(name: id.rawValue, deleteBranch: true)
            } catch {
                HostLog.warning("session \(id) is integrated as \(commit) but its worktree could not be removed: \(error)")
            }
        }
        _ = try? await store.withdrawPending(session: id, reason: "the session was integrated")
        _ = try? await store.modifySession(id: id) {
            $0.status = .integrated
            $0.error = nil
            if !keep { $0.worktreePath = nil }
        }
        await startQueued()
        if let summary = try? await summary(id) { notify(.sessionUpdated(summary)) }
    }

    /// The squash commit's message: the subject (title or prompt), then what the session was
    /// asked and what it changed since it branched (its own files only).
    func squashMessage(_ record: SessionRecord, subject: String) async -> String {
        var body = "\(subject.isEmpty ? "Work of a Nucleic session" : subject)\n\nPrompt: \(record.prompt)\n"
        if let (stat, files, _) = try? await diff(record.id, statOnly: true), !files.isEmpty {
            body += "\nFiles changed (\(stat.files), +\(stat.insertions) −\(stat.deletions)):\n"
            for f in files { body += "  \(f.path) (+\(f.insertions) −\(f.deletions))\n" }
        }
        return body
    }

    /// The identity git commits with in the repository at `path` (docs/GIT.md, "Identity").
    func gitIdentity(_ path: String) async throws(SessionError) -> GitIdentity {
        do {
            return try await RepositoryActor.open(path, executor: Self.worktreeExecutor).configuredIdentity()
        } catch let error as GitError where error.code == .identityNotConfigured {
            throw SessionError(.conflict, error.message)
        } catch { throw SessionError(.internalError, "reading the git identity of \(path): \(error)") }
    }

    /// What the commits written for `record` say: its title (or prompt) as subject, its agent
    /// (with the model its transcript names) as co-author.
    func attribution(_ record: SessionRecord) async -> SessionAttribution {
        var backend = record.backend
        var model: String?
        if let events = try? await events(record.id, after: 0) {
            for event in events {
                guard case .sessionStarted(let started) = event.event else { continue }
                model = started.model
                // A replayed session credits the agent of its recording.
                if record.backend == "replay" { backend = started.backend }
                break
            }
        }
        let manifest = configuration.adapters[backend] ?? configuration.adapters.values.first { $0.codec == backend }
        let known = Self.knownCoAuthors[manifest?.codec ?? backend]
        let name = manifest?.displayName ?? known?.name ?? backend
        let email = manifest?.coAuthorEmail ?? known?.email ?? "noreply@nucleic.invalid"
        return SessionAttribution(
            subject: SessionAttribution.subject(title: record.title, prompt: record.prompt),
            coAuthors: [CoAuthor(name: name + (model.map { " (\($0))" } ?? ""), email: email)])
    }

    /// Co-authors for the built-in backends when no manifest is loaded (the demo's host).
    static let knownCoAuthors: [String: (name: String, email: String)] = [
        "claude": ("Claude Code", "noreply@anthropic.com"),
        "codex": ("Codex", "noreply@openai.com"),
    ]

    static func resolvePrompt(base: String, branch: String) -> String {
        """
        Your branch \(branch) no longer merges cleanly into \(base): \(base) has moved. In this worktree, merge \
        \(base) into your branch, resolve every conflict, make sure the project still builds and its tests pass, \
        and commit the result. Do not push or touch any other branch.
        """
    }

    /// Waits (a bounded while) for a session's turn to end after an interrupt.
    func waitUntilTurnEnds(_ id: SessionID) async {
        for _ in 0..<100 {
            guard let session = live[id]?.session else { return }
            if ![.running, .awaitingApproval].contains(await session.status) { return }
            try? await Task.sleep(for: .milliseconds(100))
        }
    }
}
