import Foundation
@testable import NucleicGit
import Testing

/// The commits Nucleic writes are the user's: git's configured identity as author and
/// committer, the agent as a `Co-authored-by:` trailer, the session's title as subject.
@Suite struct IdentityTests {
    static let attribution = SessionAttribution(
        subject: "Fix the price rounding", coAuthors: [CoAuthor(name: "Claude Code (claude-opus-5-5)", email: "noreply@anthropic.com")])

    /// A fixture whose repository has its own identity, unlike the global one tests run with.
    static func fixture() throws -> IntegrationFixture {
        let fixture = try IntegrationFixture()
        try GitCLI.ok(["config", "user.name", "Repo Person"], in: fixture.repoPath)
        try GitCLI.ok(["config", "user.email", "repo@example.com"], in: fixture.repoPath)
        return fixture
    }

    @Test func theRepositorysOwnIdentityWins() throws {
        let fixture = try Self.fixture()
        let identity = try fixture.repository.configuredIdentity()
        #expect(identity.author == Signature(name: "Repo Person", email: "repo@example.com"))
        #expect(identity.committer == identity.author)
        // A session worktree reads the same configuration.
        let session = try fixture.session("s")
        #expect(try Repository.open(session.path).configuredIdentity() == identity)
        try GitCLI.ok(["config", "author.name", "Author Person"], in: fixture.repoPath)
        let split = try fixture.repository.configuredIdentity()
        #expect(split.author.name == "Author Person")
        #expect(split.committer.name == "Repo Person")
    }

    @Test func resolvingFollowsGitsPrecedence() {
        #expect(GitIdentity.resolve { _ in nil } == nil)
        #expect(GitIdentity.resolve { $0 == "user.name" ? "Only Name" : nil } == nil)
        #expect(GitIdentity.resolve { ["user.name": "  ", "user.email": "x@y"][$0] } == nil)
        let both = GitIdentity.resolve { ["user.name": "U", "user.email": "u@x", "committer.email": "c@x"][$0] }
        #expect(both?.author == Signature(name: "U", email: "u@x"))
        #expect(both?.committer == Signature(name: "U", email: "c@x"))
    }

    @Test func subjectsComeFromTheTitleOrThePrompt() {
        #expect(SessionAttribution.subject(title: "Fix   the\tcart", prompt: "p") == "Fix the cart")
        #expect(SessionAttribution.subject(title: "  ", prompt: "\n\nAdd a README\nwith details") == "Add a README")
        #expect(SessionAttribution.subject(title: "", prompt: "") == "")
        let long = SessionAttribution.subject(title: String(repeating: "word ", count: 40), prompt: "")
        #expect(long.count <= SessionAttribution.subjectLimit)
        #expect(long.hasSuffix("word…"))
        #expect(IntegrationMessage.squash(" ", sessionID: "s", attribution: Self.attribution)
            == "Fix the price rounding\n\nCo-authored-by: Claude Code (claude-opus-5-5) <noreply@anthropic.com>\nNucleic-Session: s\n")
        #expect(IntegrationMessage.squash(" ", sessionID: "s") == "Work of a Nucleic session\n\nNucleic-Session: s\n")
    }

    /// Every strategy, base moved (so merge and rebase write commits of their own): each commit
    /// Nucleic wrote carries the identity; the snapshot, merge and squash the trailers and subject.
    @Test(arguments: ["merge", "rebase", "squash"])
    func everyCommitCarriesTheIdentityAndTheTrailer(_ strategy: String) throws {
        let fixture = try Self.fixture()
        let identity = try fixture.repository.configuredIdentity()
        let session = try fixture.session("s")
        try fixture.write(["src/cart.swift": "let cart = 1\n", "new.txt": "new\n"], in: session.path)
        try fixture.commit(["docs/extra.md": "the user's own\n"], message: "user work")
        let before = try fixture.rev("main")
        var request = fixture.request(session, strategy == "merge" ? .merge() : strategy == "rebase" ? .rebase : .squash(message: ""))
        request.author = identity.author
        request.committer = identity.committer
        request.attribution = Self.attribution
        let integration = try expectIntegrated(try Integrator(fixture.repository).integrate(request))
        #expect(!integration.createdCommits.isEmpty)
        let written = try GitCLI.ok(["rev-list", "\(before)..main", "^\(before)"], in: fixture.repoPath)
            .split(separator: "\n").map(String.init)
        #expect(!written.isEmpty)
        for commit in written + [integration.snapshot?.hex].compactMap({ $0 }) {
            let who = try GitCLI.ok(["log", "-1", "--format=%an <%ae>|%cn <%ce>", commit], in: fixture.repoPath)
            #expect(who == "Repo Person <repo@example.com>|Repo Person <repo@example.com>\n", "\(commit)")
            let trailers = try GitCLI.ok(["log", "-1", "--format=%(trailers:only,unfold)", commit], in: fixture.repoPath)
            #expect(trailers.contains("Co-authored-by: Claude Code (claude-opus-5-5) <noreply@anthropic.com>"), "\(commit): \(trailers)")
            #expect(trailers.contains("Nucleic-Session: s"), "\(commit): \(trailers)")
            let subject = try GitCLI.ok(["log", "-1", "--format=%s", commit], in: fixture.repoPath)
            #expect(subject == "Fix the price rounding\n", "\(commit)")
            #expect(!subject.contains("Snapshot of session"))
        }
    }

    @Test func aSnapshotWithoutAnIdentityLooksItUpOnlyWhenThereIsWork() throws {
        let fixture = try Self.fixture()
        let session = try fixture.session("s")
        let integrator = Integrator(fixture.repository)
        // Clean: nothing to commit, no identity needed.
        #expect(try integrator.snapshot(worktree: session.path, sessionID: "s", author: nil) == nil)
        try fixture.write(["kept.txt": "work\n"], in: session.path)
        let commit = try #require(try integrator.snapshot(
            worktree: session.path, sessionID: "s", author: nil, attribution: Self.attribution, purpose: .discard))
        let who = try GitCLI.ok(["log", "-1", "--format=%an <%ae>|%cn|%s", commit.hex], in: fixture.repoPath)
        #expect(who == "Repo Person <repo@example.com>|Repo Person|Fix the price rounding\n")
        #expect(try fixture.rev(session.branch) == commit.hex)
        #expect(try fixture.status(session.path).isEmpty)
    }
}
