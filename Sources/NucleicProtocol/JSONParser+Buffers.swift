// The parser's scratch storage (see `JSONParser`).

/// A stack of values for the parser's containers under construction, innermost last.
///
/// A container's values are pushed as they are parsed; at its closing bracket they are moved (not
/// copied: no retain/release) into one array of exactly their count, and the stack shrinks back.
/// One stack serves every nesting level, so a text costs one growing buffer, not one per container.
struct ScratchStack<Element>: ~Copyable {
    private var storage: UnsafeMutablePointer<Element>?
    private var capacity = 0
    private(set) var count = 0

    init() {}

    deinit {
        // Values of containers left open by an error.
        storage?.deinitialize(count: count)
        storage?.deallocate()
    }

    @inline(__always) mutating func push(_ element: consuming Element) {
        if count == capacity { grow() }
        (storage! + count).initialize(to: element)
        count += 1
    }

    /// Moves the values from `start` to the top into a new array.
    mutating func popArray(from start: Int) -> [Element] {
        let n = count - start
        guard n > 0, let storage else { return [] }
        // Not `Array(unsafeUninitializedCapacity:)`: it allocates through an unspecialized
        // runtime call that looks the element type's metadata up every time (5% of a parse).
        var array: [Element] = []
        array.reserveCapacity(n)
        for i in start..<count { array.append((storage + i).move()) }
        count = start
        return array
    }

    private mutating func grow() {
        let newCapacity = max(16, capacity * 2)
        let newStorage = UnsafeMutablePointer<Element>.allocate(capacity: newCapacity)
        if let storage {
            newStorage.moveInitialize(from: storage, count: count)
            storage.deallocate()
        }
        storage = newStorage
        capacity = newCapacity
    }
}

/// A growable byte buffer for decoding escaped strings: appends are `memcpy`s, and clearing it
/// keeps its capacity for the next string.
struct ByteBuffer: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>?
    private var capacity = 0
    private(set) var count = 0

    init() {}

    deinit { storage?.deallocate() }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: storage, count: count) }

    mutating func removeAll() { count = 0 }

    @inline(__always) mutating func append(_ byte: UInt8) {
        if count == capacity { grow(minimum: count + 1) }
        storage![count] = byte
        count += 1
    }

    /// Room for `k` more bytes, at the end: write them, then `commit` how many to keep.
    @inline(__always) mutating func reserveTail(_ k: Int) -> UnsafeMutablePointer<UInt8> {
        if count + k > capacity { grow(minimum: count + k) }
        return storage! + count
    }

    @inline(__always) mutating func commit(_ k: Int) { count += k }

    @inline(__always) mutating func append(_ start: UnsafePointer<UInt8>, count n: Int) {
        guard n > 0 else { return }
        if count + n > capacity { grow(minimum: count + n) }
        UnsafeMutableRawPointer(storage! + count).copyMemory(from: start, byteCount: n)
        count += n
    }

    private mutating func grow(minimum: Int) {
        let newCapacity = max(minimum, 256, capacity * 2)
        let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        if let storage {
            newStorage.update(from: storage, count: count)
            storage.deallocate()
        }
        storage = newStorage
        capacity = newCapacity
    }
}
