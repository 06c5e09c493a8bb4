import Foundation
import NucleicGit
import Testing

/// `overlap`: files that several live sessions have touched, from their diff stats.
@Suite struct IntegrationOverlapTests {
    @Test func listsFilesTouchedByTwoOrMoreSessions() throws {
        let f = try IntegrationFixture()
        let a = try f.session("a"), b = try f.session("b"), c = try f.session("c")
        // a: commits a change to price.swift and renames the guide; b: an uncommitted change to
        // price.swift and a new file; c: edits the renamed guide's old path and its own file.
        try f.commit(["src/price.swift": "func price() -> Int {\n    return 1\n}\n"], message: "a: price", in: a.path)
        try GitCLI.ok(["mv", "docs/guide.md", "docs/manual.md"], in: a.path)
        try f.write(["src/price.swift": "func price() -> Int {\n    return 2\n}\n", "shared/new.txt": "b\n"], in: b.path)
        try f.write(["docs/guide.md": "c rewrote the guide\n", "shared/new.txt": "c\n", "c-only.txt": "c\n", "c.log": "ignored\n"], in: c.path)

        let overlap = try Integrator(f.repository).overlap([
            SessionWorktree(id: "a", path: a.path, base: "main"),
            SessionWorktree(id: "b", path: b.path, base: "main"),
            SessionWorktree(id: "c", path: c.path, base: .commit(try #require(OID(hex: f.rev("main"))))),
        ])

        #expect(overlap == ["src/price.swift": ["a", "b"], "docs/guide.md": ["a", "c"], "shared/new.txt": ["b", "c"]])
        #expect(try Integrator(f.repository).overlap([SessionWorktree(id: "a", path: a.path, base: "main")]).isEmpty)
    }

    @Test func theActorComputesTheSameOverlap() async throws {
        let f = try IntegrationFixture()
        let a = try f.session("a"), b = try f.session("b")
        try f.write(["README.md": "a\n"], in: a.path)
        try f.write(["README.md": "b\n"], in: b.path)
        let actor = try await RepositoryActor.open(f.repoPath)
        let overlap = try await actor.overlap([SessionWorktree(id: "a", path: a.path, base: "main"), SessionWorktree(id: "b", path: b.path, base: "main")])
        #expect(overlap == ["README.md": ["a", "b"]])
    }
}
