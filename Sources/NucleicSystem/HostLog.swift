#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The host's own diagnostics, one line each on stderr (the daemon's stderr is its log).
///
/// The log is never cut silently: a line that cannot be written (the disk is full) is counted,
/// and the next line that can be written is preceded by one saying how many were lost.
public enum HostLog {
    public static func warning(_ message: String) { write("warning: \(message)") }
    public static func info(_ message: String) { write(message) }

    /// Lines not written since the last one that was, and the error that stopped the first.
    private static let lost = Mutex<(count: Int, errno: Int32)>((0, 0))

    private static func write(_ message: String) {
        lost.withLock { lost in
            if lost.count > 0 {
                let note = "nucleic: warning: \(lost.count) log line\(lost.count == 1 ? "" : "s") could not be written (\(String(cString: strerror(lost.errno)))) and are missing here\n"
                guard writeAll(Array(note.utf8)) else {
                    lost.count += 1
                    return
                }
                lost.count = 0
            }
            if !writeAll(Array("nucleic: \(message)\n".utf8)) {
                if lost.count == 0 { lost.errno = errno }
                lost.count += 1
            }
        }
    }

    /// Writes the whole line or nothing that counts: a short write is finished, a failed one reported.
    private static func writeAll(_ line: [UInt8]) -> Bool {
        line.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                offset += n
            }
            return true
        }
    }
}
