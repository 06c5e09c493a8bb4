import Glibc
import NucleicProtocol
import NucleicSystem
import Testing

/// A domain of the tests' own, shaped like the I/O layers' errors.
enum ProbeFailure: SystemErrorDomain {
    typealias Diagnostics = SystemDiagnostics
}

typealias ProbeError = CodedError<ProbeFailure>

extension CodedError.Code where Domain == ProbeFailure {
    static var refused: Self { Self("refused") }
    static var closed: Self { Self("closed") }
}

/// A domain without diagnostics, with a description of its own.
enum PlainFailure: ErrorDomain {
    static func describe(_ error: CodedError<Self>) -> String { "plain \(error.code): \(error.message)" }
}

extension CodedError.Code where Domain == PlainFailure {
    static var closed: Self { Self("closed") }
}

@Suite struct CodedErrorTests {
    @Test func equalityIsCodeAndMessageOnly() {
        let a = ProbeError(.refused, "cannot bind /tmp/s", path: "/tmp/s", function: "bind", errno: EADDRINUSE)
        let b = ProbeError(.refused, "cannot bind /tmp/s", path: "/elsewhere", function: "listen", errno: EACCES)
        let c = ProbeError(.refused, "cannot bind /tmp/t")
        let d = ProbeError(.closed, "cannot bind /tmp/s")
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(Set([a, b, c, d]).count == 3)
        #expect(a != c)
        #expect(a != d)
    }

    @Test func systemDiagnosticsCarryTheFailedCall() {
        let error = ProbeError(.refused, "cannot bind /tmp/s", path: "/tmp/s", function: "bind", errno: EADDRINUSE)
        #expect(error.path == "/tmp/s")
        #expect(error.function == "bind")
        #expect(error.errno == EADDRINUSE)
        #expect(error.diagnostics.cause == SystemCallFailure("bind", errno: EADDRINUSE, path: "/tmp/s"))
        #expect(error.description == "cannot bind /tmp/s [bind: \(String(cString: strerror(EADDRINUSE))) (errno \(EADDRINUSE))]")
        // A path alone is no failed call: the description is the message.
        let noCall = ProbeError(.closed, "closed", path: "/tmp/s")
        #expect(noCall.diagnostics.cause == nil)
        #expect(noCall.function == nil)
        #expect(noCall.description == "closed")
    }

    @Test func anErrorFromAFailedCall() {
        errno = ENOENT
        let failure = SystemCallFailure.last("open", path: "/nowhere")
        #expect(failure == SystemCallFailure("open", errno: ENOENT, path: "/nowhere"))
        #expect(failure.description == "open: \(errnoName(ENOENT))")
        let error = ProbeError(.refused, "cannot open /nowhere", cause: failure)
        #expect(error.path == "/nowhere")
        #expect(error.errno == ENOENT)
    }

    @Test func codesAreComparableStringsOfTheirDomain() {
        #expect(ProbeError.Code.closed < ProbeError.Code.refused)
        #expect(ProbeError.Code.closed.rawValue == "closed")
        #expect(ProbeError.Code(rawValue: "closed") == .closed)
        #expect("\(ProbeError.Code.refused)" == "refused")
        // The same spelling in two domains is two codes of two types; matching works by pattern.
        let plain = CodedError<PlainFailure>(.closed, "the link closed")
        switch plain.code {
        case .closed: break
        default: Issue.record("pattern match on a code failed")
        }
        #expect(plain.description == "plain closed: the link closed")
        #expect(plain == CodedError<PlainFailure>(.closed, "the link closed"))
    }

    @Test func errorsCrossTaskBoundariesAndThrowTyped() async {
        func fail() throws(ProbeError) { throw ProbeError(.refused, "no", function: "connect", errno: ECONNREFUSED) }
        let caught = await Task { () -> ProbeError? in
            do throws(ProbeError) { try fail(); return nil } catch { return error }
        }.value
        #expect(caught?.code == .refused)
        #expect(caught?.errno == ECONNREFUSED)
    }
}
