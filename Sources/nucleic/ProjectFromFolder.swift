#if canImport(Glibc)
import Glibc
#endif
import NucleicCommandLine
import NucleicGit
import NucleicProtocol

/// The project of the folder the command runs in, as git and gh take the repository from it:
/// inside a registered repository, or any worktree of it (a session's or one of the user's),
/// commands that take `--project` default to that project.
enum ProjectFromFolder {
    /// The project whose repository holds `folder` (the same git common directory), if one is
    /// registered; nil outside any repository or in one that is not a project.
    static func project(of folder: String, among projects: [ProjectInfo]) -> ProjectInfo? {
        guard !projects.isEmpty, let here = commonDirectory(folder) else { return nil }
        return projects.first { commonDirectory($0.path) == here }
    }

    static func commonDirectory(_ path: String) -> String? {
        guard let repository = try? Repository.open(path) else { return nil }
        return canonical(repository.commonDirectory)
    }

    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `--project` as given, else the project of the current folder, else nil (the daemon then
    /// takes the only project, or asks for one).
    static func resolve(_ given: String?, _ client: DaemonClient) async throws -> String? {
        if let given { return given }
        guard case .projectList(let projects) = try await client.request(.listProjects).body else { return nil }
        return project(of: SessionCommands.currentDirectory(), among: projects)?.name
    }
}

/// A prompt or a follow-up with something in it: an empty one is refused before anything starts.
enum Prompt {
    static func nonEmpty(_ text: String, _ what: String, usage: String) throws(UsageError) -> String {
        guard text.contains(where: { !$0.isWhitespace }) else {
            throw UsageError(message: "\(what) is empty: say what the agent should do", usage: usage)
        }
        return text
    }
}
