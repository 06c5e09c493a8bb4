#if canImport(Glibc)
import Glibc
#endif
import CDBus
import NucleicSystem
import Synchronization

/// One private connection to a session bus (libdbus-1), owned by a thread of its own: method
/// calls are jobs run there (libdbus blocks), and the signals it receives are handed to
/// `onSignal`, on that thread.
///
/// ### Invariants
/// - The connection is touched only on its thread; it is closed and released there when the
///   session is closed or the bus goes away. A private connection never exits the process on
///   disconnect (libdbus does that only for its shared bus connections).
final class DBusSession: @unchecked Sendable {  // the connection pointer is used on `thread` only; the rest is a Mutex and a queue
    typealias Job = @Sendable (OpaquePointer) -> Void

    /// A signal's interface, member and arguments (only strings and uint32s are kept).
    struct Signal: Sendable, Hashable {
        var interface: String
        var member: String
        var arguments: [Argument]
    }

    enum Argument: Sendable, Hashable {
        case uint32(UInt32)
        case string(String)
        case other
    }

    private let jobs = BlockingQueue<Job>()
    private let connected = Mutex(true)

    /// Whether the bus is still there.
    var isConnected: Bool { connected.withLock { $0 } }

    private init() {}

    /// Connects to the bus at `address` (a D-Bus address, `unix:path=…`), says Hello, and adds
    /// the match rules.
    static func open(address: String, matches: [String], onSignal: @escaping @Sendable (Signal) -> Void) async throws(NotifyError) -> DBusSession {
        let session = DBusSession()
        let result: Result<Void, NotifyError> = await withCheckedContinuation { continuation in
            let rc = startDetachedThread(name: "nucleic-dbus") {
                session.serve(address: address, matches: matches, onSignal: onSignal) { continuation.resume(returning: $0) }
            }
            if rc != 0 { continuation.resume(returning: .failure(NotifyError("cannot start the D-Bus thread: \(String(cString: strerror(rc)))"))) }
        }
        try result.get()
        return session
    }

    /// Runs `job` on the connection's thread; false when the session is closed.
    func run(_ job: @escaping Job) -> Bool { jobs.push(job) }

    func close() { jobs.close() }

    private func serve(address: String, matches: [String], onSignal: @Sendable (Signal) -> Void,
                       opened: (Result<Void, NotifyError>) -> Void) {
        defer { connected.withLock { $0 = false } }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private(address, &error) else {
            opened(.failure(NotifyError("cannot connect to the session bus at \(address): \(Self.message(error))")))
            jobs.close()
            return
        }
        defer {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, &error) != 0 else {
            opened(.failure(NotifyError("the session bus at \(address) refused Hello: \(Self.message(error))")))
            jobs.close()
            return
        }
        for rule in matches {
            dbus_bus_add_match(connection, rule, &error)
            if dbus_error_is_set(&error) != 0 {
                opened(.failure(NotifyError("the session bus refused the match \(rule): \(Self.message(error))")))
                jobs.close()
                return
            }
        }
        opened(.success(()))
        // Jobs first (a caller waits on each), then what arrived. The queue's timeout bounds how
        // long a signal waits to be read when no job comes.
        while true {
            if let job = jobs.pop(timeout: .milliseconds(100)) {
                job(connection)
            } else if jobs.isClosed {
                break
            }
            dbus_connection_read_write(connection, 0)
            while let message = dbus_connection_pop_message(connection) {
                if dbus_message_get_type(message) == DBusType.signalMessage, let signal = Self.signal(message) { onSignal(signal) }
                dbus_message_unref(message)
            }
            if dbus_connection_get_is_connected(connection) == 0 {
                jobs.close()
                while let job = jobs.pop() { job(connection) }  // each fails on the closed connection
                break
            }
        }
    }

    static func message(_ error: DBusError) -> String {
        guard let text = error.message else { return "unknown D-Bus error" }
        return String(cString: text)
    }

    static func signal(_ message: OpaquePointer) -> Signal? {
        guard let interface = dbus_message_get_interface(message), let member = dbus_message_get_member(message) else { return nil }
        var arguments: [Argument] = []
        var iter = DBusMessageIter()
        if dbus_message_iter_init(message, &iter) != 0 {
            repeat {
                switch dbus_message_iter_get_arg_type(&iter) {
                case DBusType.uint32:
                    var value: UInt32 = 0
                    dbus_message_iter_get_basic(&iter, &value)
                    arguments.append(.uint32(value))
                case DBusType.string:
                    var value: UnsafePointer<CChar>?
                    dbus_message_iter_get_basic(&iter, &value)
                    arguments.append(value.map { .string(String(cString: $0)) } ?? .other)
                default:
                    arguments.append(.other)
                }
            } while dbus_message_iter_next(&iter) != 0
        }
        return Signal(interface: String(cString: interface), member: String(cString: member), arguments: arguments)
    }
}

/// The D-Bus type codes and message types, which libdbus defines as macros of character
/// casts (`((int) 's')`) that Swift does not import.
enum DBusType {
    static let string = Int32(UInt8(ascii: "s"))
    static let uint32 = Int32(UInt8(ascii: "u"))
    static let int32 = Int32(UInt8(ascii: "i"))
    static let byte = Int32(UInt8(ascii: "y"))
    static let array = Int32(UInt8(ascii: "a"))
    static let variant = Int32(UInt8(ascii: "v"))
    static let dictEntry = Int32(UInt8(ascii: "e"))
    /// DBUS_MESSAGE_TYPE_SIGNAL.
    static let signalMessage: Int32 = 4
    /// DBUS_TIMEOUT_USE_DEFAULT is -1; calls here wait at most this long (milliseconds).
    static let callTimeout: Int32 = 5_000
}
