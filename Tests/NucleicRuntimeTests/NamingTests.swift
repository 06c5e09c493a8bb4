import NucleicProtocol
import NucleicRuntime
import Testing

@Suite struct NamingTests {
    @Test(arguments: [
        ("Fix the flaky payment test", "fix-the-flaky-payment-test"),
        ("  --Hello,   World!! ", "hello-world"),
        ("Ünïcödé ✨ only", "n-c-d-only"),
        ("日本語", "session"),
        ("", "session"),
        ("a/b\\c..d", "a-b-c-d"),
        (String(repeating: "word ", count: 30), "word-word-word-word-word-word-word-word"),
    ])
    func slugsAreBranchSafe(_ title: String, _ expected: String) {
        let slug = Naming.slug(title)
        #expect(slug == expected)
        #expect(slug.count <= 40 && !slug.hasPrefix("-") && !slug.hasSuffix("-") && !slug.contains("--"))
    }

    @Test func titlesComeFromTheFirstLine() {
        #expect(Naming.title(fromPrompt: "fix it\nand more detail") == "fix it")
        #expect(Naming.title(fromPrompt: "   ") == "untitled")
        let long = Naming.title(fromPrompt: String(repeating: "abcdef ", count: 20))
        #expect(long.hasSuffix("…") && long.count <= 61)
    }

    @Test func prefixesResolveToOneIdOrSayWhy() {
        let ids: [SessionID] = ["0193aaaa-0000-7000-8000-000000000001", "0193aaab-0000-7000-8000-000000000002", "0193bbbb-0000-7000-8000-000000000003"]
        #expect(Naming.resolve("0193b", among: ids) == .one(ids[2]))
        #expect(Naming.resolve("0193AAAB", among: ids) == .one(ids[1]))
        #expect(Naming.resolve("0193aaa", among: ids) == .ambiguous([ids[0], ids[1]]))
        #expect(Naming.resolve("ffff", among: ids) == .none)
        #expect(Naming.resolve("", among: ids) == .none)
        #expect(Naming.resolve(ids[0].rawValue, among: ids) == .one(ids[0]))
    }
}
