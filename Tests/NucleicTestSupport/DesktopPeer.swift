import Foundation

/// A private session bus (`dbus-daemon --session`) with python-dbusmock's notification server
/// on it (Debian's python3-dbusmock, run by /usr/bin/python3), logging every call it gets.
public final class DesktopPeer: Sendable {
    let peer: PeerProcess
    public var folder: String { peer.folder }
    public var address: String { peer.readyLine }
    public var logPath: String { folder + "/calls.log" }

    public init() throws {
        peer = try PeerProcess("desktop", executable: "/usr/bin/dbus-daemon") {
            ["--session", "--nofork", "--print-address=1", "--address=unix:path=\($0)/bus"]
        }
        try peer.attach(executable: "/usr/bin/python3",
                        arguments: ["-m", "dbusmock", "--template", "notification_daemon", "-l", peer.folder + "/calls.log"],
                        environment: ["DBUS_SESSION_BUS_ADDRESS": peer.readyLine, "PATH": "/usr/bin:/bin"])
        // Ready once the server owns its name.
        for _ in 0..<100 {
            if try python("import dbus,sys; b=dbus.bus.BusConnection(sys.argv[1]); print(b.name_has_owner('org.freedesktop.Notifications'))", address)
                .contains("True") { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        peer.stop()
        throw FixtureError("the notification mock did not come up on \(address)")
    }

    /// The calls the server got, one a line (`Notify "Nucleic" 0 "" …`), without timestamps.
    public func calls() -> [String] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map { line in String(line.drop { $0 != " " }.dropFirst()) }
    }

    /// Clicks an action of notification `id`, as a person would (the server emits ActionInvoked).
    public func invoke(_ id: UInt32, _ action: String) throws {
        _ = try python("""
            import dbus,sys
            b=dbus.bus.BusConnection(sys.argv[1])
            o=b.get_object('org.freedesktop.Notifications','/org/freedesktop/Notifications')
            o.EmitSignal('org.freedesktop.Notifications','ActionInvoked','us',[dbus.UInt32(int(sys.argv[2])),sys.argv[3]],dbus_interface='org.freedesktop.DBus.Mock')
            """, address, String(id), action)
    }

    func python(_ code: String, _ arguments: String...) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", code] + arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Stops the notification server and the bus.
    public func stop() { peer.stop() }

    public static var available: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            && FileManager.default.fileExists(atPath: "/usr/lib/python3/dist-packages/dbusmock")
    }
}
