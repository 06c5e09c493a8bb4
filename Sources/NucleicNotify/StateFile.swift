import NucleicSystem

/// The notifier's small private files (its saved alerts, the VAPID key): `WholeFile`, with its
/// failures said as `NotifyError`s.
enum StateFile {
    /// The file's bytes; nil when it does not exist.
    static func read(_ path: String) throws(NotifyError) -> [UInt8]? {
        do { return try WholeFile.read(path) } catch { throw NotifyError("cannot read \(path): \(error)") }
    }

    /// Replaces the file with `bytes`, creating its folder (0700); on failure the old file is kept.
    static func write(_ path: String, _ bytes: [UInt8]) throws(NotifyError) {
        do { try WholeFile.replace(path, with: bytes) } catch { throw NotifyError("cannot write \(path): \(error); the old file is kept") }
    }
}

/// What went wrong in the notifier or a channel, for the daemon's log and `nucleic notify`.
public struct NotifyError: Error, CustomStringConvertible, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
