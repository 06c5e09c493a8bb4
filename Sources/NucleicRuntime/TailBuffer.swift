import Synchronization

/// The last `capacity` bytes appended to it, for error reports ("what did the agent last say on
/// stderr before it died").
final class TailBuffer: Sendable {
    let capacity: Int
    private let bytes = Mutex<[UInt8]>([])

    init(capacity: Int) {
        precondition(capacity > 0, "TailBuffer capacity must be positive")
        self.capacity = capacity
    }

    /// Appends `chunk`, forgetting what falls out of the window.
    func append(_ chunk: [UInt8]) {
        bytes.withLock { bytes in
            bytes.append(contentsOf: chunk.suffix(capacity))
            // Trim only once the buffer holds twice the window, so appends stay amortised O(1).
            if bytes.count > 2 * capacity { bytes.removeFirst(bytes.count - capacity) }
        }
    }

    /// The last `min(maxBytes, capacity)` bytes.
    func suffix(_ maxBytes: Int) -> [UInt8] {
        bytes.withLock { Array($0.suffix(max(0, min(maxBytes, capacity)))) }
    }
}
