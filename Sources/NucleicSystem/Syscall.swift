public import Glibc

/// System calls that may be interrupted by a signal (EINTR), retried until they are not.
///
/// Each returns what the C call returns (a count, a descriptor, a pid, or -1 with `errno` set
/// to anything but EINTR), so callers keep their own error handling and only the retry loop is
/// written once. Nucleic installs no signal handlers of its own, but a debugger, a profiler or a
/// library may, and then any blocking call can fail with EINTR.
public enum Syscall {
    /// Calls `body` again while it returns -1 with `errno` EINTR.
    public static func retrying<T: FixedWidthInteger>(_ body: () -> T) -> T {
        while true {
            let result = body()
            if result == -1 && Glibc.errno == EINTR { continue }
            return result
        }
    }

    /// `read(2)`.
    public static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        retrying { Glibc.read(fd, buffer, count) }
    }

    /// `read(2)` into `buffer`, from its start.
    public static func read(_ fd: Int32, into buffer: inout [UInt8]) -> Int {
        buffer.withUnsafeMutableBytes { bytes in retrying { Glibc.read(fd, bytes.baseAddress, bytes.count) } }
    }

    /// `write(2)`.
    public static func write(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int) -> Int {
        retrying { Glibc.write(fd, buffer, count) }
    }

    /// Writes all of `bytes`, looping over short writes. Returns nil, or the errno of the write
    /// that failed and how many bytes went before it.
    public static func writeAll(_ fd: Int32, _ bytes: some Collection<UInt8>) -> (errno: Int32, written: Int)? {
        let array = Array(bytes)
        var offset = 0
        while offset < array.count {
            let written = array.withUnsafeBytes { buffer in
                retrying { Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
            }
            if written < 0 { return (Glibc.errno, offset) }
            offset += written
        }
        return nil
    }

    /// `accept(2)`, without the peer's address.
    public static func accept(_ fd: Int32) -> Int32 {
        retrying { Glibc.accept(fd, nil, nil) }
    }

    /// `poll(2)`. A retried poll starts its timeout again; callers with a deadline recompute it.
    public static func poll(_ fds: inout [pollfd], timeout: Int32) -> Int32 {
        let count = nfds_t(fds.count)
        return fds.withUnsafeMutableBufferPointer { buffer in retrying { Glibc.poll(buffer.baseAddress, count, timeout) } }
    }

    /// `waitpid(2)`.
    @discardableResult
    public static func waitpid(_ pid: pid_t, _ status: UnsafeMutablePointer<Int32>?, _ options: Int32) -> pid_t {
        retrying { Glibc.waitpid(pid, status, options) }
    }
}
