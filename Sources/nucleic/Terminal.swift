#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine
import NucleicSystem
import Synchronization

/// The terminal `watch` draws on: raw mode, the alternate screen, the size, and the keys read
/// on a thread of their own. `leave()` restores what `enter()` changed; the driver calls it on
/// every way out (q, Ctrl-C, SIGTERM, SIGHUP, an error).
final class Terminal: Sendable {
    private let saved: Mutex<termios?> = Mutex(nil)
    private let readerPaused = Atomic<Bool>(false)
    private let readerStopped = Atomic<Bool>(false)

    /// A terminal when both standard input and output are one; nil otherwise (the line mode).
    static func open() -> Terminal? {
        isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1 ? Terminal() : nil
    }

    /// Raw input (no echo, no line editing, Ctrl-C as a byte), output still translating
    /// newlines; the alternate screen; the cursor hidden.
    func enter() {
        var t = termios()
        guard tcgetattr(STDIN_FILENO, &t) == 0 else { return }
        saved.withLock { $0 = t }
        var raw = t
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw)
        write("\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
    }

    /// Back to the screen and modes from before `enter()`. Safe to call more than once.
    func leave() {
        guard var t = saved.withLock({ s -> termios? in defer { s = nil }; return s }) else { return }
        write("\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l")
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &t)
    }

    /// Runs `body` (an editor) with the terminal as it was before `enter()`, then takes it back.
    func suspended<T>(_ body: () throws -> T) rethrows -> T {
        readerPaused.store(true, ordering: .sequentiallyConsistent)
        leave()
        defer {
            enter()
            readerPaused.store(false, ordering: .sequentiallyConsistent)
        }
        return try body()
    }

    /// Columns and rows now (80×24 when the terminal does not say).
    func size() -> (width: Int, height: Int) {
        var w = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &w) == 0, w.ws_col > 0, w.ws_row > 0 else { return (80, 24) }
        return (Int(w.ws_col), Int(w.ws_row))
    }

    /// One frame: each line from the top left, its end cleared, the rest of the screen cleared.
    func draw(_ lines: [String]) {
        var out = "\u{1B}[H"
        for (i, line) in lines.enumerated() {
            out += line + "\u{1B}[K"
            if i < lines.count - 1 { out += "\r\n" }
        }
        write(out + "\u{1B}[J")
    }

    func write(_ text: String) { Output.write(STDOUT_FILENO, text) }

    /// The bytes typed, read on a thread of its own (a blocking read must not hold the pool).
    /// Reading waits while `suspended` runs an editor, and ends at `stopReading()` or end of input.
    func keys() -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        let rc = startDetachedThread(name: "nucleic-watch-keys") { [self] in
            var buffer = [UInt8](repeating: 0, count: 256)
            while !readerStopped.load(ordering: .sequentiallyConsistent) {
                var p = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
                let ready = poll(&p, 1, 100)
                if ready < 0, errno == EINTR { continue }
                if ready <= 0 || readerPaused.load(ordering: .sequentiallyConsistent) { continue }
                let n = read(STDIN_FILENO, &buffer, buffer.count)
                if n < 0, errno == EINTR || errno == EAGAIN { continue }
                if n <= 0 { break }
                continuation.yield(Array(buffer[0..<n]))
            }
            continuation.finish()
        }
        if rc != 0 { continuation.finish() }
        return stream
    }

    func stopReading() { readerStopped.store(true, ordering: .sequentiallyConsistent) }
}
