/// The one shape of a Nucleic error: a `code` callers match on, a `message` for a person, and
/// diagnostics that are carried for logs but are not part of equality.
///
/// Each layer names its errors by a domain (`ProcessError = CodedError<ProcessFailure>`), so
/// codes of one layer cannot be confused with another's, and declares its codes as static
/// members of `Code` in a constrained extension:
///
/// ```swift
/// public enum StoreFailure: ErrorDomain { public typealias Diagnostics = StoreDiagnostics }
/// public typealias StoreError = CodedError<StoreFailure>
/// extension CodedError<StoreFailure>.Code {
///     public static var busy: Self { Self("busy") }
/// }
/// ```
///
/// Equality and hashing are `code` and `message` only, so tests and callers match on what
/// happened without the incidentals (the C function, errno, SQL, path).
public struct CodedError<Domain: ErrorDomain>: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: a string constant of this domain, extendable with new static members.
    public struct Code: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(_ rawValue: String) { self.rawValue = rawValue }

        public static func < (lhs: Code, rhs: Code) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// A sentence for a person: what happened, to what, and what to do next.
    public let message: String
    /// What the domain carries besides (a C function and errno, SQL, an offset). Not part of equality.
    public var diagnostics: Domain.Diagnostics

    public init(_ code: Code, _ message: String, diagnostics: Domain.Diagnostics) {
        self.code = code
        self.message = message
        self.diagnostics = diagnostics
    }

    public static func == (lhs: CodedError, rhs: CodedError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }

    public var description: String { Domain.describe(self) }
}

/// A family of errors: what its diagnostics are and how an error of it reads in a log.
public protocol ErrorDomain: Sendable {
    /// What an error of this domain carries besides its code and message.
    associatedtype Diagnostics: Sendable = NoDiagnostics
    /// The error as one line for a log; the message alone unless the domain says otherwise.
    static func describe(_ error: CodedError<Self>) -> String
}

extension ErrorDomain {
    public static func describe(_ error: CodedError<Self>) -> String { error.message }
}

/// The diagnostics of a domain that has none.
public struct NoDiagnostics: Sendable, Hashable {
    public init() {}
}

extension CodedError where Domain.Diagnostics == NoDiagnostics {
    public init(_ code: Code, _ message: String) {
        self.init(code, message, diagnostics: NoDiagnostics())
    }
}
