#if canImport(Glibc)
import Glibc
#endif

/// The host's own diagnostics, one line each on stderr (the daemon's stderr is its log).
public enum HostLog {
    public static func warning(_ message: String) { write("warning: \(message)") }
    public static func info(_ message: String) { write(message) }

    private static func write(_ message: String) {
        let line = Array("nucleic: \(message)\n".utf8)
        line.withUnsafeBytes { _ = Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
