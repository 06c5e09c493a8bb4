import Foundation
import NucleicHarness
import NucleicProtocol
import NucleicTestSupport
import Testing

/// Projects through the real CLI and daemon: one project per repository, `project rm`, and the
/// project taken from the folder a command runs in (its repository or any worktree of it).
@Suite(.serialized) struct ProjectEndToEndTests {
    static let toolAllow = Fixture.root.appendingPathComponent("claude/tool-allow.jsonl").path

    /// A second repository beside the harness's, with one commit.
    func repository(_ d: DaemonHarness, _ name: String) async throws -> String {
        let path = d.root + "/" + name
        try FileManager.default.createDirectory(atPath: path + "/src", withIntermediateDirectories: true)
        try "# \(name)\n".write(toFile: path + "/README.md", atomically: true, encoding: .utf8)
        for args in [["init", "-q", "-b", "main"], ["config", "user.name", "Nucleic Tests"], ["config", "user.email", "tests@localhost"],
                     ["add", "README.md"], ["commit", "-qm", "initial"]] {
            try await Git.run(args, in: path)
        }
        return path
    }

    @Test func aRepositoryIsOneProject() async throws {
        try await DaemonHarness.with { d in
            // The same repository again, however it is spelled, is refused naming its project.
            for spelling in [d.repo, d.repo + "/", d.repo + "/.", d.root + "/./shop"] {
                let again = try await d.nucleic(["project", "add", spelling, "--name", "other"])
                #expect(again.status == .exited(1) && again.stderr.contains("is already the project shop"), "\(spelling): \(again)")
            }
            let json = try await d.nucleic(["project", "add", d.repo, "--json"])
            #expect(json.status == .exited(1))
            let error = try JSONParser.parse(json.stderr)
            #expect(error["error"]?["code"] == "conflict" && error["error"]?["message"]?.stringValue?.contains("shop") == true, "\(json)")
            let projects = try await d.json(["project", "ls"])
            #expect(projects.arrayValue?.count == 1, "\(projects)")
        }
    }

    @Test func projectRmUnregistersAProjectWithoutSessions() async throws {
        try await DaemonHarness.with { d in
            let cafe = try await repository(d, "cafe")
            let added = try await d.json(["project", "add", cafe])
            #expect(added["name"] == "cafe" && added["path"]?.stringValue?.hasSuffix("/cafe") == true, "\(added)")
            let removed = try await d.json(["project", "rm", "cafe"])
            #expect(removed["name"] == "cafe", "\(removed)")
            #expect(try await d.json(["project", "ls"]).arrayValue?.compactMap { $0["name"]?.stringValue } == ["shop"])
            #expect(FileManager.default.fileExists(atPath: cafe + "/README.md"), "the repository itself stays")
            // Added again after it went: the same path is free.
            _ = try await d.ok(["project", "add", cafe])
            _ = try await d.ok(["project", "rm", "cafe"])

            let missing = try await d.nucleic(["project", "rm", "nosuch"])
            #expect(missing.status == .exited(2) && missing.stderr.contains("no project nosuch"), "\(missing)")

            // A project with a session stays.
            let id = try await d.start("make hello", ["--backend", "replay", "--fixture", Self.toolAllow])
            let busy = try await d.nucleic(["project", "rm", "shop"])
            #expect(busy.status == .exited(1) && busy.stderr.contains("project shop still has 1 session"), "\(busy)")
            _ = try await d.ok(["discard", id, "--delete-branch", "--force"])
        }
    }

    @Test func commandsTakeTheProjectOfTheFolder() async throws {
        try await DaemonHarness.with { d in
            let cafe = try await repository(d, "cafe")
            _ = try await d.ok(["project", "add", cafe])
            // Two projects: outside both, start must be told which.
            let outside = try await d.nucleic(["start", "x", "--backend", "replay", "--fixture", Self.toolAllow])
            #expect(outside.status == .exited(2) && outside.stderr.contains("choose one with --project"), "\(outside)")

            // In a subfolder of cafe's checkout: cafe.
            let inCafe = try await d.nucleic(["start", "x", "--backend", "replay", "--fixture", Self.toolAllow, "--json"], in: cafe + "/src")
            #expect(inCafe.status == .exited(0), "\(inCafe)")
            let first = try JSONParser.parse(inCafe.stdout)
            #expect(first["projectName"] == "cafe", "\(first)")

            // In the repository of shop: shop; --project still wins.
            let inShop = try await d.nucleic(["start", "y", "--backend", "replay", "--fixture", Self.toolAllow, "--json"], in: d.repo)
            let second = try JSONParser.parse(inShop.stdout)
            #expect(second["projectName"] == "shop", "\(inShop)")
            let told = try await d.nucleic(["start", "z", "--backend", "replay", "--fixture", Self.toolAllow, "--json", "-p", "cafe"], in: d.repo)
            #expect(try JSONParser.parse(told.stdout)["projectName"] == "cafe", "\(told)")

            // In a session's worktree (a linked worktree of shop): shop.
            let worktree = try #require(second["worktree"]?.stringValue)
            let inWorktree = try await d.nucleic(["start", "w", "--backend", "replay", "--fixture", Self.toolAllow, "--json"], in: worktree)
            #expect(try JSONParser.parse(inWorktree.stdout)["projectName"] == "shop", "\(inWorktree)")

            // In a worktree the user made with git: shop too.
            try await Git.run(["worktree", "add", "-q", "-b", "mine", d.root + "/shop-mine"], in: d.repo)
            let overlap = try await d.nucleic(["overlap", "--json"], in: d.root + "/shop-mine")
            #expect(overlap.status == .exited(0), "overlap takes the folder's project: \(overlap)")
            let overlapOutside = try await d.nucleic(["overlap"])
            #expect(overlapOutside.status == .exited(2), "\(overlapOutside)")
        }
    }
}
