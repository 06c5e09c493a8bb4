#if canImport(Glibc)
import Glibc
#endif
import NucleicProtocol
import NucleicRemoteKit
import NucleicWire
import NucleicSystem

/// What `nucleic remote` keeps between runs, in `$XDG_CONFIG_HOME/nucleic/` (default
/// `~/.config/nucleic/`): `remote.json` (this device's private key and the paired host, mode
/// 0600) and `remote-cursors.json` (the last seq `watch` showed per session, so a restarted
/// watch misses nothing and repeats nothing).
///
/// ### Invariants
/// - Files are written whole to a temporary file (0600) and renamed over, so a crash leaves the
///   old or the new file, never half of one; the folder is created 0700.
/// - A file that cannot be read is an error naming it, never silently replaced (the key in it
///   is this device's identity on the host).
struct RemoteConfig {
    var privateKey: [UInt8]
    var host: PairedHost?

    static var folder: String {
        let env = RemoteEnvironment.self
        if let xdg = env["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/nucleic" }
        return (env["HOME"] ?? ".") + "/.config/nucleic"
    }

    static var path: String { folder + "/remote.json" }
    static var cursorsPath: String { folder + "/remote-cursors.json" }

    /// The saved configuration, or nil when there is none yet.
    static func load() throws -> RemoteConfig? {
        guard let text = try FileText.readIfExists(path) else { return nil }
        do {
            let json = try JSONParser.parse(text)
            let f = try Fields(json, "remote.json")
            guard let key = Hex.decode(try f.string("privateKey")), key.count == 32 else {
                throw CommandError(message: "\(path): privateKey must be 32 bytes in hex")
            }
            return RemoteConfig(privateKey: key, host: try f.optional("host"))
        } catch let error as CommandError {
            throw error
        } catch {
            throw CommandError(message: "\(path) is unreadable (\(error)); move it away to pair again")
        }
    }

    /// The paired host and this device's key, or an error telling how to pair.
    static func paired() throws -> (PairedHost, NoiseKeyPair) {
        guard let config = try load(), let host = config.host else {
            throw CommandError(message: "this machine is not paired with a host: run `nucleic remote pair URI` with the host's pairing link (`nucleic pair` on the host)")
        }
        return (host, try config.keyPair())
    }

    func keyPair() throws -> NoiseKeyPair {
        do { return try NoiseKeyPair(privateKey: privateKey) } catch { throw CommandError(message: "\(Self.path): \(error)") }
    }

    func save() throws {
        var o = JSONObject()
        o.append("version", .int(1))
        o.append("privateKey", .string(Hex.encode(privateKey)))
        o.append("host", host?.json ?? .null)
        try FileText.writeAtomically(JSONWriter.string(.object(o)) + "\n", to: Self.path)
    }

    static func loadCursors() -> [SessionID: Int64] {
        guard let text = try? FileText.readIfExists(cursorsPath), let json = try? JSONParser.parse(text), case .object(let o) = json else { return [:] }
        var out: [SessionID: Int64] = [:]
        for entry in o { if let seq = entry.value.intValue { out[SessionID(entry.key)] = seq } }
        return out
    }

    static func saveCursors(_ cursors: [SessionID: Int64]) throws {
        let o = JSONObject(cursors.keys.sorted().map { JSONObject.Entry($0.rawValue, .int(cursors[$0]!)) })
        try FileText.writeAtomically(JSONWriter.string(.object(o)) + "\n", to: cursorsPath)
    }
}

enum RemoteEnvironment {
    static subscript(name: String) -> String? { getenv(name).map { String(cString: $0) } }
}

enum Hex {
    static func encode(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
    }

    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: chars.count, by: 2) {
            guard let v = UInt8(String(decoding: chars[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
            out.append(v)
        }
        return out
    }
}

