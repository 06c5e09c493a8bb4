import NucleicAdapters
import NucleicApprovals
public import NucleicProtocol
import NucleicStore
import NucleicSystem

/// The host's permission rules: stored in the store with provenance, held in memory by the
/// `RuleBook` every session consults, listed, added, removed and explained for clients.
extension SessionHost {
    /// Loads the stored rules into the rule book (at start-up). A rule whose text no longer
    /// parses is skipped with a warning, never silently widened.
    func loadRules() async throws {
        for record in try await store.rules() {
            do { ruleBook.insert(try Self.rule(record)) } catch {
                HostLog.warning("rule \(record.id) (\(record.rule)) is not a valid rule and is ignored: \(error)")
            }
        }
    }

    /// Stores a rule made by an "always" answer; the rule book has it already.
    func persist(_ rule: Rule) async {
        do { try await store.insert(Self.record(rule)) } catch {
            HostLog.warning("rule \(rule.id) (\(rule.rule)) could not be stored and holds only until the host restarts: \(error)")
        }
    }

    /// `listRules`, `addRule`, `removeRule`, `explainRule`.
    public func rules(_ request: RuleRequest, by: String) async throws(SessionError) -> HostMsg.Body {
        switch request {
        case .list(let reference):
            var rules = ruleBook.rules
            if let reference {
                let project = try await project(reference)
                let sessions: Set<SessionID>
                do { sessions = Set(try await store.sessions(matching: SessionFilter(projectID: project.id, includeArchived: true)).map(\.id)) } catch {
                    throw SessionError(.internalError, "\(error)")
                }
                rules = rules.filter {
                    switch $0.scope {
                    case .project(let p): p == project.id
                    case .session(let s): sessions.contains(s)
                    }
                }
            }
            return .ruleList(rules.map(Self.info))

        case .add(let text, let behavior, let reference, let sessionID, let message):
            let permission: PermissionRule
            do { permission = try PermissionRule(parsing: text) } catch {
                throw SessionError(.invalidDecision, "\(text) is not a rule: \(error.message) (docs/APPROVALS.md lists the syntax)")
            }
            let scope: Rule.Scope
            if let sessionID {
                _ = try await sessionRecord(sessionID)
                scope = .session(sessionID)
            } else {
                scope = .project(try await project(reference).id)
            }
            let rule = Rule(id: .make(), rule: permission, behavior: behavior == .allow ? .allow : .deny, scope: scope,
                            provenance: Rule.Provenance(createdBy: by, createdAt: .now()), message: message)
            do { try await store.insert(Self.record(rule)) } catch { throw SessionError(.internalError, "storing the rule: \(error)") }
            ruleBook.insert(rule)
            return .ruleList([Self.info(rule)])

        case .remove(let reference):
            let all = ruleBook.rules
            let id: RuleID
            switch Naming.resolve(reference, among: all.map(\.id)) {
            case .one(let found): id = found
            case .none: throw SessionError(.notFound, "no rule \(reference) (`nucleic rules ls` lists them)")
            case .ambiguous(let matches): throw SessionError(.ambiguous, "\(reference) matches \(matches.count) rules; give more characters")
            }
            do { try await store.deleteRule(id: id) } catch { throw SessionError(.internalError, "removing the rule: \(error)") }
            guard let removed = ruleBook.remove(id) else { throw SessionError(.notFound, "no rule \(reference)") }
            return .ruleList([Self.info(removed)])

        case .explain(let toolName, let input, let reference, let sessionID):
            return .ruleVerdict(try await explain(toolName: toolName, input: input, project: reference, sessionID: sessionID))
        }
    }

    /// The risk, the matching rules and the outcome of a tool call, judged exactly as a request
    /// from an agent would be, without running anything.
    func explain(toolName: String, input: JSONValue, project reference: String?, sessionID: SessionID?) async throws(SessionError) -> RuleVerdict {
        let projectID: ProjectID
        let worktree: String
        if let sessionID {
            let record = try await sessionRecord(sessionID)
            projectID = record.projectID
            guard let path = record.worktreePath else { throw SessionError(.notFound, "session \(sessionID) has no worktree") }
            worktree = path
        } else {
            let project = try await project(reference)
            projectID = project.id
            worktree = project.path
        }
        let broker = ApprovalBroker(sessionID: sessionID ?? SessionID("explain"), projectID: projectID, worktree: worktree)
        let request = ApprovalRequest(id: ApprovalID("explain"), toolCallID: nil, toolName: toolName,
                                      toolKind: ClaudeCodec.toolKind(toolName), input: input,
                                      risk: .readOnly, capabilities: .claude)
        let classification = broker.classify(request)
        let explanation = RuleEngine(rules: ruleBook.rules).explain(request, classification, session: sessionID, project: projectID)
        let outcome: RuleVerdict.Outcome
        let decidedBy: RuleID?
        switch explanation.outcome {
        case .allow(let id): (outcome, decidedBy) = (.allowedByRule, id)
        case .deny(let id, _): (outcome, decidedBy) = (.deniedByRule, id)
        case .ask: (outcome, decidedBy) = (.asks, nil)
        }
        let matches = explanation.matches.map {
            RuleVerdict.Match(ruleID: $0.ruleID, rule: $0.rule, behavior: $0.behavior == .allow ? .allow : .deny, part: $0.part,
                              honoured: $0.honoured, note: $0.note)
        }
        return RuleVerdict(risk: explanation.risk, riskReasons: classification.reasons, outcome: outcome, decidedBy: decidedBy,
                           rules: matches, reasons: explanation.reasons)
    }

    static func rule(_ record: RuleRecord) throws -> Rule {
        let scope: Rule.Scope = switch record.scope {
        case .project(let p): .project(p)
        case .session(let s): .session(s)
        }
        return Rule(id: record.id, rule: try PermissionRule(parsing: record.rule), behavior: record.behavior == .allow ? .allow : .deny,
                    scope: scope, provenance: Rule.Provenance(createdBy: record.createdBy, createdAt: record.createdAt, fromApproval: record.approvalID),
                    message: record.message)
    }

    static func record(_ rule: Rule) -> RuleRecord {
        let scope: RuleRecord.RuleScope = switch rule.scope {
        case .project(let p): .project(p)
        case .session(let s): .session(s)
        }
        return RuleRecord(id: rule.id, scope: scope, rule: rule.rule.description, behavior: rule.behavior == .allow ? .allow : .deny,
                          createdBy: rule.provenance.createdBy, createdAt: rule.provenance.createdAt,
                          approvalID: rule.provenance.fromApproval, message: rule.message)
    }

    static func info(_ rule: Rule) -> RuleInfo {
        var info = RuleInfo(id: rule.id, rule: rule.rule.description, behavior: rule.behavior == .allow ? .allow : .deny,
                            createdBy: rule.provenance.createdBy, createdAt: rule.provenance.createdAt,
                            fromApproval: rule.provenance.fromApproval, message: rule.message)
        switch rule.scope {
        case .project(let p): info.projectID = p
        case .session(let s): info.sessionID = s
        }
        return info
    }
}
