/// Where a session is in its life (DESIGN.md §6). The raw values are the wire and store spelling.
public enum SessionStatus: String, Sendable, Hashable, CaseIterable {
    case queued, running, awaitingApproval, awaitingInput, error, conflicted, finished, integrated, discarded

    /// The attention list's sections, in the order they are shown.
    public enum Bucket: String, Sendable, Hashable, CaseIterable, Comparable {
        case needsYou, running, done

        public static func < (a: Bucket, b: Bucket) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }
    }

    public var bucket: Bucket {
        switch self {
        case .awaitingApproval, .awaitingInput, .error, .conflicted: .needsYou
        case .queued, .running: .running
        case .finished, .integrated, .discarded: .done
        }
    }

    /// Over for good: shown only in the archive.
    public var isArchived: Bool { self == .integrated || self == .discarded }
}

/// How risky a tool call is, in rising order (DESIGN.md §6). The riskiest part of a compound
/// command decides.
public enum Risk: String, Sendable, Hashable, CaseIterable, Comparable {
    case readOnly, write, execute, unknown, network, hostExec, destructive

    public static func < (a: Risk, b: Risk) -> Bool { a.rank < b.rank }

    var rank: Int { Self.allCases.firstIndex(of: self)! }

    /// Network, host execution and destructive calls always need a person and are never offered
    /// "allow always".
    public var alwaysNeedsPerson: Bool { self >= .network }
}

/// What a tool does, so clients can draw it and the host can judge it before the risk classifier
/// looks closer. The names follow the Agent Client Protocol's tool kinds, plus `question`.
public enum ToolKind: String, Sendable, Hashable, CaseIterable {
    case read, edit, delete, move, search, execute, think, fetch, question, other

    /// The risk of a call of this kind before its input is looked at.
    public var baselineRisk: Risk {
        switch self {
        case .read, .search, .think, .question: .readOnly
        case .edit, .move: .write
        case .execute: .execute
        case .fetch: .network
        case .delete: .destructive
        case .other: .unknown
        }
    }
}
