#if canImport(Glibc)
import Glibc
#endif
import NucleicSystem

/// Writing to standard output and error, whole (a short write is continued, EINTR retried).
public enum Output {
    public static func standardOutput(_ text: String) { write(1, text + "\n") }
    public static func standardError(_ text: String) { write(2, text + "\n") }

    /// Standard output starts an armed pager first; a pager that has quit ends the process
    /// quietly (`Pager`).
    public static func write(_ fd: Int32, _ text: String) {
        if fd == STDOUT_FILENO { Pager.startIfArmed() }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Syscall.write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EPIPE, fd == STDOUT_FILENO, Pager.isRunning { Pager.brokenPipe() }
            if n <= 0 { return }
            bytes = bytes.dropFirst(n)
        }
    }
}
