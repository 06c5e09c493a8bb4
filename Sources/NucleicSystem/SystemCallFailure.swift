public import NucleicProtocol
import Glibc

/// A C call that failed: the function, the errno it reported, and the path it was about.
///
/// The underlying cause of the I/O layers' errors (``SystemDiagnostics``): it says which call
/// failed and why, for logs; the error around it says what that means and what to do.
public struct SystemCallFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C function, e.g. `posix_spawn` or `bind`.
    public let function: String
    /// The errno it reported.
    public let errno: Int32
    /// The file or socket path involved, if any.
    public let path: String?

    public init(_ function: String, errno: Int32, path: String? = nil) {
        self.function = function
        self.errno = errno
        self.path = path
    }

    /// The failure of the call just made: `function` with the calling thread's current `errno`.
    public static func last(_ function: String, path: String? = nil) -> SystemCallFailure {
        SystemCallFailure(function, errno: Glibc.errno, path: path)
    }

    /// `bind: Address already in use (errno 98)`.
    public var description: String { "\(function): \(errnoName(errno))" }
}

/// `strerror(errno)` with the number, e.g. `No such file or directory (errno 2)`.
public func errnoName(_ number: Int32) -> String {
    "\(String(cString: strerror(number))) (errno \(number))"
}

/// The diagnostics of an error caused by the system: the path concerned and, when a C call
/// failed, that call. Neither is part of the error's equality.
public struct SystemDiagnostics: Sendable, Hashable {
    /// The path involved (an executable, a working directory, a socket), if any.
    public var path: String?
    /// The C call that failed, if one did.
    public var cause: SystemCallFailure?

    public init(path: String? = nil, cause: SystemCallFailure? = nil) {
        self.path = path
        self.cause = cause
    }

    /// From the loose parts callers have: a cause only when both the function and errno are known.
    public init(path: String?, function: String?, errno: Int32?) {
        self.path = path
        if let function, let errno {
            cause = SystemCallFailure(function, errno: errno, path: path)
        } else {
            cause = nil
        }
    }
}

/// A domain whose errors are caused by system calls: its description appends the failed call.
public protocol SystemErrorDomain: ErrorDomain where Diagnostics == SystemDiagnostics {}

extension SystemErrorDomain {
    /// The message, then the failed call: `cannot bind … [bind: Address already in use (errno 98)]`.
    public static func describe(_ error: CodedError<Self>) -> String {
        guard let cause = error.diagnostics.cause else { return error.message }
        return "\(error.message) [\(cause)]"
    }
}

extension CodedError where Domain: SystemErrorDomain {
    /// Creates an error; `path`, `function` and `errno` are diagnostics, not part of equality.
    public init(_ code: Code, _ message: String, path: String? = nil, function: String? = nil, errno: Int32? = nil) {
        self.init(code, message, diagnostics: SystemDiagnostics(path: path, function: function, errno: errno))
    }

    /// Creates an error caused by `failure`.
    public init(_ code: Code, _ message: String, cause failure: SystemCallFailure) {
        self.init(code, message, diagnostics: SystemDiagnostics(path: failure.path, cause: failure))
    }

    /// The path involved, if any. Diagnostic only.
    public var path: String? { diagnostics.path }
    /// The C function that failed, e.g. `posix_spawn`. Diagnostic only.
    public var function: String? { diagnostics.cause?.function }
    /// The errno the C function reported. Diagnostic only.
    public var errno: Int32? { diagnostics.cause?.errno }
}
