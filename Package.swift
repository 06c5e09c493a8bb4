// swift-tools-version:6.0
// Nucleic: a host for coding agents. See docs/ARCHITECTURE.md for the layers.
import PackageDescription

// Linux only (Glibc, pidfd, prctl, SO_PEERCRED, epoll-free poll loops): no Apple platform is
// listed because none is supported.
let package = Package(
    name: "Nucleic",
    products: [
        .executable(name: "nucleic", targets: ["nucleic"]),
        .executable(name: "nucleic-bench", targets: ["nucleic-bench"]),
        .library(name: "NucleicProtocol", targets: ["NucleicProtocol"]),
        .library(name: "NucleicAdapters", targets: ["NucleicAdapters"]),
        .library(name: "NucleicRemoteKit", targets: ["NucleicRemoteKit"]),
    ],
    targets: [
        // C libraries from Debian packages (libgit2-dev, libsqlite3-dev, libsodium-dev, libqrencode-dev).
        .systemLibrary(name: "CGit2", pkgConfig: "libgit2", providers: [.apt(["libgit2-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // The desktop's notification server over the session bus (libdbus-1-dev).
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // HTTP for the push channels (libcurl4-openssl-dev) and OpenSSL's libcrypto (libssl-dev).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // What Glibc does not import: posix_spawn extras, pidfd, pipe2, prctl (needs _GNU_SOURCE).
        .target(name: "CShims", cSettings: [.define("_GNU_SOURCE")]),

        .target(name: "NucleicProtocol"),
        // Threads, the serial executor, the blocking queue, EINTR-safe syscalls, SystemCallFailure.
        .target(name: "NucleicSystem", dependencies: ["NucleicProtocol", "CShims"]),
        .target(name: "NucleicAdapters", dependencies: ["NucleicProtocol"]),
        // The approvals engine: shell parser, risk classifier, rules, the approval state machine
        // and broker. Pure (it spawns nothing): the protocol's types alone.
        .target(name: "NucleicApprovals", dependencies: ["NucleicProtocol"]),
        .target(name: "NucleicWire", dependencies: ["NucleicProtocol", "CSodium"]),
        .target(name: "NucleicStore", dependencies: ["NucleicProtocol", "NucleicSystem", "CSQLite"]),
        .target(name: "NucleicGit", dependencies: ["NucleicProtocol", "NucleicSystem", "CGit2"]),
        .target(name: "NucleicRuntime", dependencies: ["NucleicProtocol", "NucleicAdapters", "NucleicApprovals", "NucleicStore", "NucleicGit", "NucleicSystem", "CShims"]),
        // Unix and TCP sockets: listeners, connections with their I/O thread, frames, peer credentials.
        .target(name: "NucleicSockets", dependencies: ["NucleicProtocol", "NucleicSystem", "CShims"]),
        .target(name: "NucleicSync", dependencies: ["NucleicProtocol", "NucleicWire", "NucleicStore", "NucleicSockets", "NucleicSystem", "CQRencode"]),
        // Argument parsing and output shared by the `nucleic` and `nucleic-bench` executables (docs/CLI.md).
        .target(name: "NucleicCommandLine", dependencies: ["NucleicProtocol", "NucleicSystem"]),
        // The phone's client core (docs/CLIENTS.md): platform-free, Foundation at most.
        .target(name: "NucleicRemoteKit", dependencies: ["NucleicProtocol", "NucleicWire"]),
        // `nucleic watch` as values: its state and keys on the kit's state, and its screen (pure).
        .target(name: "NucleicWatch", dependencies: ["NucleicProtocol", "NucleicRemoteKit"]),
        // The notifier (docs/OPERATIONS.md, "Notifications"): the pure ladder and its channels.
        .target(name: "NucleicNotify", dependencies: ["NucleicProtocol", "NucleicSystem", "CDBus", "CCurl", "CCrypto"]),
        // `nucleic serve` as a library value: the daemon's services and the group that runs them.
        .target(name: "NucleicDaemon", dependencies: ["NucleicProtocol", "NucleicRuntime", "NucleicSync", "NucleicSockets", "NucleicSystem", "NucleicNotify"]),
        .executableTarget(
            name: "nucleic",
            dependencies: ["NucleicDaemon", "NucleicProtocol", "NucleicAdapters", "NucleicRuntime", "NucleicGit", "NucleicStore", "NucleicWire", "NucleicSync", "NucleicSockets", "NucleicRemoteKit", "NucleicWatch", "NucleicSystem", "NucleicCommandLine"]
        ),
        .executableTarget(
            name: "nucleic-bench",
            dependencies: ["NucleicProtocol", "NucleicAdapters", "NucleicRuntime", "NucleicStore", "NucleicGit", "NucleicWire", "NucleicSync", "NucleicSockets", "NucleicSystem", "NucleicCommandLine", "CSodium"]),

        .testTarget(name: "NucleicSystemTests", dependencies: ["NucleicSystem", "NucleicProtocol"]),
        .testTarget(name: "NucleicCommandLineTests", dependencies: ["NucleicCommandLine"]),
        .testTarget(name: "NucleicProtocolTests", dependencies: ["NucleicProtocol", "NucleicTestSupport"]),
        .testTarget(name: "NucleicStoreTests", dependencies: ["NucleicStore", "NucleicProtocol", "NucleicTestSupport"]),
        .testTarget(name: "NucleicGitTests", dependencies: ["NucleicGit", "NucleicSystem"]),
        // Fixtures, counts derived from raw lines, seeded randomness: shared by the tests below.
        .target(name: "NucleicTestSupport", dependencies: ["NucleicAdapters", "NucleicProtocol"], path: "Tests/NucleicTestSupport"),
        // The one harness for tests that drive the built `nucleic`: NucleicCommand (a real child
        // process) and DaemonHarness on it (a private home, a project, the daemon and what it left).
        .target(name: "NucleicHarness", dependencies: ["NucleicRuntime", "NucleicProtocol", "NucleicTestSupport"], path: "Tests/NucleicHarness"),
        .testTarget(name: "NucleicTestSupportTests", dependencies: ["NucleicTestSupport"]),
        .testTarget(name: "NucleicAdaptersTests", dependencies: ["NucleicAdapters", "NucleicProtocol", "NucleicTestSupport"]),
        .testTarget(name: "NucleicApprovalsTests", dependencies: ["NucleicApprovals", "NucleicProtocol"]),
        .testTarget(name: "NucleicRuntimeTests", dependencies: ["NucleicRuntime", "NucleicTestSupport"]),
        .testTarget(name: "NucleicSocketsTests", dependencies: ["NucleicSockets", "CShims", "NucleicTestSupport"]),
        .testTarget(
            name: "NucleicSyncTests",
            dependencies: ["NucleicSync", "NucleicSockets", "NucleicWire", "NucleicRuntime", "NucleicStore", "NucleicProtocol", "NucleicTestSupport", "NucleicHarness", "NucleicNotify"]),
        .testTarget(name: "NucleicDaemonTests", dependencies: ["NucleicDaemon", "NucleicNotify", "NucleicRuntime", "NucleicSync", "NucleicSockets", "NucleicProtocol", "NucleicTestSupport", "NucleicRemoteKit", "NucleicWire"]),
        .testTarget(name: "NucleicNotifyTests", dependencies: ["NucleicNotify", "NucleicProtocol", "NucleicRemoteKit", "NucleicTestSupport"]),
        .testTarget(name: "NucleicWireTests", dependencies: ["NucleicWire", "NucleicProtocol", "NucleicTestSupport"]),
        .testTarget(name: "NucleicWatchTests", dependencies: ["NucleicWatch", "NucleicRemoteKit", "NucleicProtocol"]),
        .testTarget(name: "NucleicRemoteKitTests", dependencies: ["NucleicRemoteKit", "NucleicWire", "NucleicProtocol", "NucleicHarness"]),
        // Drives the built `nucleic` binary and the real agent CLIs against the mock model APIs.
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["NucleicAdapters", "NucleicProtocol", "NucleicRuntime", "NucleicTestSupport", "NucleicHarness"]
        ),
    ]
)

for target in package.targets where target.type != .system {
    guard target.name.hasPrefix("Nucleic") || target.name.hasPrefix("nucleic") || target.name.hasSuffix("Tests") || target.name.hasSuffix("TestSupport") else { continue }
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    target.swiftSettings = settings
}
package.swiftLanguageModes = [.v6]
