import Glibc

/// A descriptor shared by several owners, closed exactly once when the last one lets go.
///
/// Used for the pidfd, which the monitor thread polls and `ChildProcess` signals through: closing
/// it in `deinit` means it is never closed while the thread may still be polling it.
final class SharedDescriptor: Sendable {
    let raw: Int32

    init(_ raw: Int32) { self.raw = raw }

    deinit { _ = Glibc.close(raw) }
}
