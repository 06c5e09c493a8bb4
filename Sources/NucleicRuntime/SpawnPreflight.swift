import Glibc
import NucleicSystem

/// Checks made before `posix_spawn`, so a failure names the exact thing that is wrong.
///
/// `posix_spawn` reports a missing executable and a missing working directory both as ENOENT;
/// looking first lets the error say which, and list the PATH that was searched.
enum SpawnPreflight {
    /// PATH when neither the child's environment nor the host's has one (glibc's default plus
    /// /usr/local/bin).
    static let defaultSearchPath = "/usr/local/bin:/usr/bin:/bin"

    /// Fails unless `directory` exists, is a directory, and may be entered.
    static func checkWorkingDirectory(_ directory: String) throws(ProcessError) {
        var info = stat()
        guard stat(directory, &info) == 0 else {
            let number = errno
            throw ProcessError(
                number == ENOENT || number == ENOTDIR ? .workingDirectoryMissing : .workingDirectoryNotAccessible,
                "working directory '\(directory)' does not exist; create it or pass an existing folder",
                path: directory, function: "stat", errno: number
            )
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw ProcessError(
                .workingDirectoryMissing,
                "working directory '\(directory)' is not a directory; pass a folder",
                path: directory
            )
        }
        guard access(directory, X_OK) == 0 else {
            throw ProcessError(
                .workingDirectoryNotAccessible,
                "working directory '\(directory)' may not be entered (no search permission); fix its permissions",
                path: directory, function: "access", errno: errno
            )
        }
    }

    /// The path to hand to `posix_spawn` for `executable`.
    ///
    /// A name with a slash is used as is (a relative one is resolved in the child's working
    /// directory, as `cd dir && ./tool` would). A bare name is searched on `searchPath`, skipping
    /// relative entries (a relative PATH entry would depend on the cwd of whoever looks).
    static func resolve(_ executable: String, searchPath: String, workingDirectory: String?) throws(ProcessError) -> String {
        guard !executable.isEmpty else {
            throw ProcessError(.executableNotFound, "no executable given: pass a name or a path")
        }
        if executable.contains("/") {
            var checked = executable
            if !executable.hasPrefix("/"), let workingDirectory { checked = workingDirectory + "/" + executable }
            try checkRunnable(checked, reportedAs: executable)
            return executable
        }
        var notRunnable: String?
        for directory in searchPath.split(separator: ":", omittingEmptySubsequences: true) where directory.hasPrefix("/") {
            let candidate = directory.hasSuffix("/") ? "\(directory)\(executable)" : "\(directory)/\(executable)"
            var info = stat()
            guard stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            if access(candidate, X_OK) == 0 { return candidate }
            notRunnable = notRunnable ?? candidate
        }
        if let notRunnable {
            throw ProcessError(
                .executableNotRunnable,
                "executable '\(executable)' was found at '\(notRunnable)' but is not executable; fix its permissions",
                path: notRunnable
            )
        }
        throw ProcessError(
            .executableNotFound,
            "executable '\(executable)' was not found in PATH (\(searchPath)); install it or pass its full path",
            path: executable
        )
    }

    private static func checkRunnable(_ path: String, reportedAs name: String) throws(ProcessError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let number = errno
            throw ProcessError(
                number == ENOENT || number == ENOTDIR ? .executableNotFound : .executableNotRunnable,
                number == ENOENT || number == ENOTDIR
                    ? "executable '\(name)' does not exist; check the path or install it"
                    : "executable '\(name)' cannot be inspected: \(errnoName(number))",
                path: path, function: "stat", errno: number
            )
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ProcessError(.executableNotRunnable, "executable '\(name)' is not a regular file", path: path)
        }
        guard access(path, X_OK) == 0 else {
            throw ProcessError(
                .executableNotRunnable,
                "executable '\(name)' is not executable; fix its permissions (chmod +x)",
                path: path, function: "access", errno: errno
            )
        }
    }
}
