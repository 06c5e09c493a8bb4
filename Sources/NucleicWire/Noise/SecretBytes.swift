import CSodium

/// Key material (a private key, a cipher key, a chaining key, a PSK, a Diffie-Hellman result) in
/// memory this object owns alone, zeroed with `sodium_memzero` when the object is released.
///
/// ### Invariants
/// - The bytes are written only while an initializer runs; afterwards they are read-only. That is
///   why sharing one instance between threads is safe, and why the class is `@unchecked Sendable`.
/// - The memory never leaves the object except inside a `withUnsafeBytes` closure; this module
///   copies secret bytes only into other `SecretBytes` (or the caller's own buffers on request).
/// - `deinit` zeroes the memory before freeing it.
public final class SecretBytes: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer
    /// The number of bytes.
    public let count: Int

    /// Creates `count` bytes filled in by `body`; on a throw the bytes are zeroed and freed.
    init<E: Error>(count: Int, initializingWith body: (UnsafeMutableRawBufferPointer) throws(E) -> Void) throws(E) {
        Sodium.ensureInitialized()
        // Never a zero-byte allocation, so `baseAddress` is never nil for the C calls.
        precondition(count >= 0, "SecretBytes count must not be negative")
        base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        base.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        self.count = count
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// Copies `bytes` (for example a PSK decoded from a pairing URI) into owned, zeroed-on-release memory.
    public convenience init(copying bytes: some Collection<UInt8>) {
        self.init(count: bytes.count) { buffer in
            _ = buffer.initializeMemory(as: UInt8.self, from: bytes)
        }
    }

    /// `count` bytes from libsodium's CSPRNG (`randombytes_buf`).
    public static func random(count: Int) -> SecretBytes {
        SecretBytes(count: count) { buffer in randombytes_buf(buffer.baseAddress!, buffer.count) }
    }

    /// Lends the bytes to `body`; they must not escape it.
    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Whether both hold the same bytes, compared in constant time (`sodium_memcmp`).
    public func constantTimeEquals(_ other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        guard count > 0 else { return true }
        return sodium_memcmp(base, other.base, count) == 0
    }

    deinit {
        // The allocation is at least one byte even when `count` is 0.
        sodium_memzero(base, max(count, 1))
        base.deallocate()
    }
}
