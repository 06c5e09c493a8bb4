import CGit2

/// Owns one libgit2 object for the length of a scope and frees it when the scope ends.
///
/// `~Copyable`, so there is exactly one owner: the handle cannot be copied and freed twice, and
/// it is freed in `deinit` on every path, errors included. Lend the pointer to libgit2 calls with
/// `handle.pointer`; never keep it past the handle's lifetime.
struct GitHandle: ~Copyable {
    let pointer: OpaquePointer
    private let free: @convention(c) (OpaquePointer?) -> Void

    init(_ pointer: OpaquePointer, free: @escaping @convention(c) (OpaquePointer?) -> Void) {
        self.pointer = pointer
        self.free = free
    }

    deinit { free(pointer) }

    /// Runs a libgit2 constructor (`git_x_lookup(&out, …)`) and takes ownership of its result.
    static func make(
        _ function: String, _ action: @autoclosure () -> String? = nil, path: String? = nil,
        free: @escaping @convention(c) (OpaquePointer?) -> Void,
        _ body: (inout OpaquePointer?) -> Int32
    ) throws -> GitHandle {
        var out: OpaquePointer?
        git_error_clear()
        let rc = body(&out)
        if rc < 0 {
            // Some constructors hand back a partial object on failure; free it.
            if let out { free(out) }
            throw GitError.fromLibgit2(rc, function, action(), path: path)
        }
        guard let out else {
            throw GitError(.generic, "\(function) returned no object and no error.", function: function, path: path)
        }
        return GitHandle(out, free: free)
    }
}

/// A `git_buf` filled by libgit2, disposed when the scope ends.
struct GitBuffer: ~Copyable {
    /// Pass this to libgit2's `git_buf *` parameters.
    let raw: UnsafeMutablePointer<git_buf>

    init() {
        raw = .allocate(capacity: 1)
        raw.initialize(to: git_buf())
    }

    deinit {
        git_buf_dispose(raw)
        raw.deallocate()
    }

    /// The bytes as a string (UTF-8, invalid sequences repaired).
    var string: String {
        let size = raw.pointee.size
        guard let ptr = raw.pointee.ptr, size > 0 else { return "" }
        return ptr.withMemoryRebound(to: UInt8.self, capacity: size) {
            String(decoding: UnsafeBufferPointer(start: $0, count: size), as: UTF8.self)
        }
    }
}

/// Copies a `git_strarray` into Swift strings and disposes it.
func takeStrings(_ array: inout git_strarray) -> [String] {
    defer { git_strarray_dispose(&array) }
    var result: [String] = []
    for index in 0..<array.count {
        if let string = array.strings[index] { result.append(String(cString: string)) }
    }
    return result
}
