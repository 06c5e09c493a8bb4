#if canImport(Glibc)
import Glibc
import NucleicSystem
#endif

/// CPU time and memory of this process (the host, in-process) and of its reaped children (the
/// agents), from `getrusage` and `/proc`.
enum ProcessStats {
    /// User + system CPU seconds of this process, all threads.
    static func selfCPU() -> Double { cpu(RUSAGE_SELF.rawValue) }

    /// User + system CPU seconds of the children this process has reaped (the runtime reaps every
    /// agent through its pidfd, so an agent counts once it has exited).
    static func childrenCPU() -> Double { cpu(RUSAGE_CHILDREN.rawValue) }

    private static func cpu(_ who: __rusage_who_t) -> Double {
        var usage = rusage()
        getrusage(who, &usage)
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    private static func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }

    /// Resident set size now, in bytes (`VmRSS`).
    static func residentBytes() -> Int { statusField("VmRSS") ?? 0 }

    /// The resident high-water mark since the start or the last `resetPeak()` (`VmHWM`).
    static func peakResidentBytes() -> Int { statusField("VmHWM") ?? 0 }

    /// Resets `VmHWM` to the current RSS (Linux ≥ 4.0, writing 5 to `clear_refs`), so each phase
    /// reports its own peak. False when the kernel refuses; then the peak is since the start.
    @discardableResult
    static func resetPeak() -> Bool {
        let fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
    }

    /// A `kB` field of `/proc/self/status`, in bytes.
    /// Another process's RSS (`VmRSS` of `/proc/PID/status`); nil once it is gone.
    static func residentBytes(of pid: Int32) -> Int? { statusField("VmRSS", process: "\(pid)") }

    private static func statusField(_ name: String, process: String = "self") -> Int? {
        guard let text = WholeFile.text("/proc/\(process)/status") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name + ":") {
            let digits = line.dropFirst(name.count + 1).filter { $0.isNumber }
            return Int(digits).map { $0 * 1024 }
        }
        return nil
    }

    /// Bytes the allocator has handed out and not had back (all arenas, mmapped blocks included),
    /// from glibc's `malloc_info`: unlike RSS, it falls when memory is freed, even when glibc
    /// keeps the pages. Nil when `malloc_info` is not there.
    static func heapInUse() -> Int? {
        guard let function = glibc("malloc_info") else { return nil }
        typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return nil }
        let rc = unsafeBitCast(function, to: MallocInfo.self)(0, stream)
        fclose(stream)
        guard let buffer else { return nil }
        defer { free(buffer) }
        guard rc == 0 else { return nil }
        // The totals follow the per-arena sections: `<total type="fast|rest|mmap" … size="N"/>`
        // (free small chunks, other free chunks, mmapped blocks) and `<system type="current" size="N"/>`.
        var totals: [String: Int] = [:]
        for line in String(cString: buffer).split(separator: "\n") where line.hasPrefix("<total ") || line.hasPrefix("<system type=\"current\"") {
            let key = line.hasPrefix("<system") ? "system" : String(attribute("type", in: line) ?? "")
            totals[key] = Int(attribute("size", in: line) ?? "")
        }
        guard let system = totals["system"], let fast = totals["fast"], let rest = totals["rest"] else { return nil }
        return system - fast - rest + (totals["mmap"] ?? 0)
    }

    /// Gives free heap pages back to the kernel (`malloc_trim(0)`), so that RSS measured next is
    /// not inflated by what an earlier phase freed and glibc kept.
    static func trimHeap() {
        guard let function = glibc("malloc_trim") else { return }
        typealias MallocTrim = @convention(c) (Int) -> Int32
        _ = unsafeBitCast(function, to: MallocTrim.self)(0)
    }

    /// A glibc function that Swift's Glibc module does not import (malloc.h is not in it).
    private static func glibc(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(dlopen(nil, RTLD_NOW), name)
    }

    /// The value of `name="…"` in an XML tag (no Foundation here: a plain scan).
    private static func attribute(_ name: String, in line: Substring) -> Substring? {
        let key = Array((" " + name + "=\"").utf8)
        let bytes = Array(line.utf8)
        guard bytes.count >= key.count else { return nil }
        for i in 0...(bytes.count - key.count) where bytes[i..<(i + key.count)].elementsEqual(key) {
            let start = i + key.count
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            return Substring(String(decoding: bytes[start..<end], as: UTF8.self))
        }
        return nil
    }

    /// The agents below this process: its live children, except that a session shim (`nucleic
    /// shim`, the agent's parent) stands for the children it started.
    static func agentPIDs() -> [Int32] {
        childPIDs().flatMap { pid -> [Int32] in
            let arguments = (WholeFile.text("/proc/\(pid)/cmdline") ?? "").split(separator: "\0")
            return arguments.dropFirst().first == "shim" ? childPIDs(of: "\(pid)") : [pid]
        }
    }

    /// The pids of this process's live children (every thread's `children` list).
    static func childPIDs(of process: String = "self") -> [Int32] {
        guard let directory = opendir("/proc/\(process)/task") else { return [] }
        defer { closedir(directory) }
        var pids: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.first?.isNumber == true, let text = WholeFile.text("/proc/\(process)/task/\(name)/children") else { continue }
            pids += text.split(separator: " ").compactMap { Int32($0.filter(\.isNumber)) }
        }
        return pids
    }

    /// Bytes `pid` has written so far (`wchar` of `/proc/PID/io`): for an agent, about its stdout.
    static func bytesWritten(by pid: Int32) -> Int? {
        guard let text = WholeFile.text("/proc/\(pid)/io") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
            return Int(line.dropFirst(6).filter(\.isNumber))
        }
        return nil
    }

    /// The 1-minute load average (runnable and waiting-on-disk tasks, machine-wide).
    static func loadAverage() -> Double? {
        WholeFile.text("/proc/loadavg")?.split(separator: " ").first.flatMap { Double($0) }
    }

    /// The size of a file in bytes, or nil.
    static func fileSize(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
}

extension Format {
    /// `123.4 MB` (10^6 bytes).
    static func megabytes(_ bytes: Int) -> String { fixed(Double(bytes) / 1e6, 1) + " MB" }
}

/// How long the disk under a folder takes to make a small append durable, right now.
///
/// The host makes every agent line durable before its events are announced (two flushes a
/// line: the raw journal, then the transcript), so its event rate follows this latency, and the
/// latency follows whatever else the machine is writing back. Each run prints it beside its rate.
enum DiskProbe {
    /// The median of `count` `write(300 bytes) + fdatasync` pairs in a temporary file in `folder`, in seconds.
    static func fdatasyncLatency(in folder: String, count: Int = 200) -> Double? {
        let path = folder + "/.nucleic-bench-probe"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return nil }
        defer {
            close(fd)
            unlink(path)
        }
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 300)
        var samples: [Double] = []
        for _ in 0..<count {
            let started = monotonicSeconds()
            guard line.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == line.count, fdatasync(fd) == 0 else { return nil }
            samples.append(monotonicSeconds() - started)
        }
        return SessionsBenchmark.percentiles(samples).median
    }
}
