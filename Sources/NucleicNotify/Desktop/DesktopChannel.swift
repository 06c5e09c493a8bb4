#if canImport(Glibc)
import Glibc
#endif
import CDBus
public import NucleicProtocol
import NucleicSystem

/// The desktop of the host's session: freedesktop Notifications (`org.freedesktop.Notifications`
/// on the session bus) through libdbus-1. A notification replaces this session's last one by
/// its id (`replaces_id`), is withdrawn with `CloseNotification`, and offers Allow and Deny
/// only for approvals the risk gate lets be answered inline; a click on one comes back as
/// `ActionInvoked` and goes to `onAction` with the notification's id.
///
/// The bus is connected when the service starts (so a click on what an earlier daemon showed is
/// heard), and again on a show after it went away, so a desktop session that starts after the
/// daemon is found.
public actor DesktopChannel: NotificationChannel {
    public nonisolated let info: ChannelInfo
    public let address: String
    private var session: DBusSession?
    /// A click on an action: the notification's id (the handle) and the action's key.
    private let onAction: @Sendable (_ handle: String, _ action: String) -> Void

    static let service = "org.freedesktop.Notifications"
    static let path = "/org/freedesktop/Notifications"
    static let interface = "org.freedesktop.Notifications"

    public init(address: String, categories: Set<NotificationCategory> = Set(NotificationCategory.allCases),
                onAction: @escaping @Sendable (_ handle: String, _ action: String) -> Void = { _, _ in }) {
        info = ChannelInfo(id: .desktop, stage: .desk, categories: categories)
        self.address = address
        self.onAction = onAction
    }

    /// The session bus of this environment: `DBUS_SESSION_BUS_ADDRESS`, else the user's bus at
    /// `$XDG_RUNTIME_DIR/bus` when that socket exists; nil when neither.
    public static func busAddress(environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var st = stat()
            if stat(runtime + "/bus", &st) == 0, st.st_mode & S_IFMT == S_IFSOCK { return "unix:path=\(runtime)/bus" }
        }
        return nil
    }

    public func show(_ payload: NotificationPayload, replacing: String?) async -> Notifier.DeliveryOutcome {
        let notify = NotifyCall(payload: payload, replacesID: replacing.flatMap { UInt32($0) } ?? 0)
        switch await call("Notify", notify.append) {
        case .success(let id?): return .shown(handle: String(id))
        case .success(nil): return .failed("the notification server answered Notify without an id")
        case .failure(let error): return .failed(error.message)
        }
    }

    public func withdraw(_ payload: NotificationPayload, handle: String?) async {
        guard let id = handle.flatMap({ UInt32($0) }) else { return }
        if case .failure(let error) = await call("CloseNotification", { iter in
            var value = id
            return dbus_message_iter_append_basic(&iter, DBusType.uint32, &value) != 0
        }) {
            HostLog.warning("notifications: desktop: cannot close notification \(id): \(error.message)")
        }
    }

    /// Connects now, so the actions of notifications an earlier daemon showed are heard; a bus
    /// that is not there yet is tried again on the next show.
    public func start() async {
        do { _ = try await connected() } catch {
            HostLog.info("notifications: desktop: \(error.message); trying again with the next notification")
        }
    }

    /// Closes the bus connection.
    public func close() {
        session?.close()
        session = nil
    }

    private func connected() async throws(NotifyError) -> DBusSession {
        if let session, session.isConnected { return session }
        let onAction = self.onAction
        let rule = "type='signal',interface='\(Self.interface)',member='ActionInvoked'"
        let opened = try await DBusSession.open(address: address, matches: [rule]) { signal in
            guard signal.member == "ActionInvoked", signal.arguments.count >= 2,
                case .uint32(let id) = signal.arguments[0], case .string(let key) = signal.arguments[1]
            else { return }
            onAction(String(id), key)
        }
        session = opened
        return opened
    }

    /// Calls a method of the notification server with the arguments `append` writes; the reply's
    /// first argument when it is a uint32.
    private func call(_ method: String, _ append: @escaping @Sendable (inout DBusMessageIter) -> Bool) async -> Result<UInt32?, NotifyError> {
        let session: DBusSession
        do { session = try await connected() } catch { return .failure(error) }
        return await withCheckedContinuation { continuation in
            let queued = session.run { connection in
                continuation.resume(returning: Self.invoke(connection, method, append))
            }
            if !queued { continuation.resume(returning: .failure(NotifyError("the session bus went away"))) }
        }
    }

    /// On the session's thread: one method call, waited for.
    private static func invoke(_ connection: OpaquePointer, _ method: String, _ append: (inout DBusMessageIter) -> Bool) -> Result<UInt32?, NotifyError> {
        guard let message = dbus_message_new_method_call(service, path, interface, method) else { return .failure(NotifyError("out of memory")) }
        defer { dbus_message_unref(message) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        guard append(&iter) else { return .failure(NotifyError("cannot build the \(method) call")) }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, message, DBusType.callTimeout, &error) else {
            return .failure(NotifyError("\(method): \(DBusSession.message(error))"))
        }
        defer { dbus_message_unref(reply) }
        var out = DBusMessageIter()
        guard dbus_message_iter_init(reply, &out) != 0, dbus_message_iter_get_arg_type(&out) == DBusType.uint32 else { return .success(nil) }
        var id: UInt32 = 0
        dbus_message_iter_get_basic(&out, &id)
        return .success(id)
    }
}

/// The arguments of `Notify` (susssasa{sv}i) for a payload.
struct NotifyCall: Sendable {
    var appName = "Nucleic"
    var replacesID: UInt32
    var summary: String
    var body: String
    /// Key, label, key, label…
    var actions: [String]
    /// 0 low, 1 normal, 2 critical (the `urgency` hint).
    var urgency: UInt8
    /// Milliseconds; 0 never expires, -1 is the server's choice.
    var expireTimeout: Int32

    init(payload: NotificationPayload, replacesID: UInt32) {
        self.replacesID = replacesID
        summary = payload.heading
        body = payload.reason
        actions = payload.category == .needsYou && payload.answerableInline ? ["allow", "Allow", "deny", "Deny"] : []
        urgency = payload.category.priority == .high ? 2 : 1
        // What waits for a person stays until it is answered (then it is withdrawn).
        expireTimeout = payload.category == .needsYou ? 0 : -1
    }

    func append(_ iter: inout DBusMessageIter) -> Bool {
        var ok = Self.string(&iter, appName)
        var replaces = replacesID
        ok = ok && dbus_message_iter_append_basic(&iter, DBusType.uint32, &replaces) != 0
        ok = ok && Self.string(&iter, "") && Self.string(&iter, summary) && Self.string(&iter, body)
        var list = DBusMessageIter()
        ok = ok && dbus_message_iter_open_container(&iter, DBusType.array, "s", &list) != 0
        for action in actions { ok = ok && Self.string(&list, action) }
        ok = ok && dbus_message_iter_close_container(&iter, &list) != 0
        var hints = DBusMessageIter()
        ok = ok && dbus_message_iter_open_container(&iter, DBusType.array, "{sv}", &hints) != 0
        var entry = DBusMessageIter()
        ok = ok && dbus_message_iter_open_container(&hints, DBusType.dictEntry, nil, &entry) != 0
        ok = ok && Self.string(&entry, "urgency")
        var variant = DBusMessageIter()
        ok = ok && dbus_message_iter_open_container(&entry, DBusType.variant, "y", &variant) != 0
        var level = urgency
        ok = ok && dbus_message_iter_append_basic(&variant, DBusType.byte, &level) != 0
        ok = ok && dbus_message_iter_close_container(&entry, &variant) != 0
        ok = ok && dbus_message_iter_close_container(&hints, &entry) != 0
        ok = ok && dbus_message_iter_close_container(&iter, &hints) != 0
        var timeout = expireTimeout
        ok = ok && dbus_message_iter_append_basic(&iter, DBusType.int32, &timeout) != 0
        return ok
    }

    static func string(_ iter: inout DBusMessageIter, _ text: String) -> Bool {
        text.withCString { pointer in
            var p: UnsafePointer<CChar>? = pointer
            return dbus_message_iter_append_basic(&iter, DBusType.string, &p) != 0
        }
    }
}
