import Glibc
@testable import NucleicSockets
import Testing

/// SocketPath.resolve with short and long homes, a runtime folder or none, and unsafe folders.
struct SocketPathTests {
    /// A home whose `run/nucleic.sock` is exactly `length` bytes long.
    private func home(makingSocketPathOf length: Int) -> String {
        let suffix = "/run/nucleic.sock"
        let base = "/home/someone/"
        return base + String(repeating: "h", count: length - suffix.count - base.count)
    }

    @Test func usesTheHomeWhenThePathFits() throws {
        #expect(try SocketPath.resolve(home: "/home/ana/.nucleic", runtimeDirectory: nil) == "/home/ana/.nucleic/run/nucleic.sock")
        #expect(try SocketPath.resolve(home: "/home/ana/.nucleic/", runtimeDirectory: nil) == "/home/ana/.nucleic/run/nucleic.sock")
        let longest = home(makingSocketPathOf: 107)
        #expect(SocketPath.maxLength == 107)
        #expect(try SocketPath.resolve(home: longest, runtimeDirectory: nil) == longest + "/run/nucleic.sock")
    }

    @Test func usesTheRuntimeFolderWhenTheHomeIsTooLong() throws {
        let runtime = makeTemporaryDirectory()
        defer { removeTree(runtime) }
        let home = home(makingSocketPathOf: 108)
        let path = try SocketPath.resolve(home: home, runtimeDirectory: runtime)
        #expect(path == runtime + "/nucleic-\(SocketPath.shortHash(of: home)).sock")
        #expect(SocketPath.fits(path))
    }

    @Test func fallsBackToAPrivateFolderUnderTmpWithoutARuntimeFolder() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let home = "/home/someone/" + String(repeating: "x", count: 200)
        let path = try SocketPath.resolve(home: home, runtimeDirectory: nil, temporaryDirectory: tmp)
        let folder = tmp + "/nucleic-\(getuid())"
        #expect(path == folder + "/\(SocketPath.shortHash(of: home)).sock")
        #expect(fileType(of: folder) == S_IFDIR)
        #expect(mode(of: folder) == 0o700)
        // A second resolve reuses the folder.
        #expect(try SocketPath.resolve(home: home, runtimeDirectory: nil, temporaryDirectory: tmp) == path)
        // A relative or missing runtime folder is not used either.
        #expect(try SocketPath.resolve(home: home, runtimeDirectory: "relative/run", temporaryDirectory: tmp) == path)
        #expect(try SocketPath.resolve(home: home, runtimeDirectory: tmp + "/missing", temporaryDirectory: tmp) == path)
    }

    @Test func skipsARuntimeFolderThatIsNotPrivate() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let runtime = tmp + "/runtime"
        #expect(mkdir(runtime, 0o700) == 0)
        #expect(chmod(runtime, 0o770) == 0)
        let home = "/home/someone/" + String(repeating: "x", count: 200)
        let path = try SocketPath.resolve(home: home, runtimeDirectory: runtime, temporaryDirectory: tmp)
        #expect(path.hasPrefix(tmp + "/nucleic-\(getuid())/"))
    }

    @Test func refusesATmpFolderWritableByItsGroup() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let folder = tmp + "/nucleic-\(getuid())"
        #expect(mkdir(folder, 0o700) == 0)
        #expect(chmod(folder, 0o770) == 0)
        let error = #expect(throws: SocketError.self) {
            try SocketPath.resolve(home: "/" + String(repeating: "y", count: 120), runtimeDirectory: nil, temporaryDirectory: tmp)
        }
        #expect(error?.code == .unsafeDirectory)
        #expect(error?.message.contains(folder) == true)
        #expect(error?.message.contains("writable by its group or by others (mode 0770)") == true)
        // Refused, not repaired.
        #expect(mode(of: folder) == 0o770)
    }

    @Test func refusesATmpFolderThatIsNotOurs() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        // The folder belongs to the real uid; resolving for another uid finds someone else's folder.
        let other = getuid() + 1
        let folder = tmp + "/nucleic-\(other)"
        #expect(mkdir(folder, 0o700) == 0)
        let error = #expect(throws: SocketError.self) {
            try SocketPath.resolve(home: "/" + String(repeating: "y", count: 120), runtimeDirectory: nil, temporaryDirectory: tmp, uid: other)
        }
        #expect(error?.code == .unsafeDirectory)
        #expect(error?.message.contains("it belongs to uid \(getuid()), not to uid \(other)") == true)
    }

    @Test func refusesATmpFolderThatIsASymlink() throws {
        let tmp = makeTemporaryDirectory()
        defer { removeTree(tmp) }
        let target = tmp + "/elsewhere"
        #expect(mkdir(target, 0o700) == 0)
        #expect(symlink(target, tmp + "/nucleic-\(getuid())") == 0)
        let error = #expect(throws: SocketError.self) {
            try SocketPath.resolve(home: "/" + String(repeating: "y", count: 120), runtimeDirectory: nil, temporaryDirectory: tmp)
        }
        #expect(error?.code == .unsafeDirectory)
        #expect(error?.message.contains("symbolic link") == true)
    }

    @Test func hashesHomesStablyAndApart() {
        let hash = SocketPath.shortHash(of: "/home/ana/.nucleic")
        #expect(hash.count == 16)
        #expect(hash.allSatisfy { "0123456789abcdef".contains($0) })
        #expect(SocketPath.shortHash(of: "/home/ana/.nucleic/") == hash)
        #expect(SocketPath.shortHash(of: "/home/ana/.nucleid") != hash)
        // FNV-1a-64 of the empty string is its offset basis.
        #expect(SocketPath.shortHash(of: "") == "cbf29ce484222325")
    }

    @Test func checksTheSocketPathLimit() {
        #expect(SocketPath.fits("/" + String(repeating: "a", count: 106)))
        #expect(!SocketPath.fits("/" + String(repeating: "a", count: 107)))
        #expect(!SocketPath.fits(""))
        #expect(!SocketPath.fits("/a\u{0}b"))
    }
}
