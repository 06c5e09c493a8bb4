import NucleicAdapters
import Testing

struct CommandWordsTests {
    @Test func splitsAsAShellSplitsASimpleCommand() throws {
        #expect(try CommandWords.split("kimi acp") == ["kimi", "acp"])
        #expect(try CommandWords.split("  /opt/x/bin/python3   'my agent.py' --name \"a \\\"b\\\"\" c\\ d ") ==
                ["/opt/x/bin/python3", "my agent.py", "--name", "a \"b\"", "c d"])
        #expect(try CommandWords.split("echo $HOME | x;y") == ["echo", "$HOME", "|", "x;y"], "nothing is expanded or run")
        #expect(try CommandWords.split("''") == [""])
        #expect(try CommandWords.split("") == [])
    }

    @Test func unclosedQuotesAreErrors() {
        #expect(throws: CommandWords.SplitError.self) { try CommandWords.split("a 'b") }
        #expect(throws: CommandWords.SplitError.self) { try CommandWords.split("a \"b") }
        #expect(throws: CommandWords.SplitError.self) { try CommandWords.split("a \\") }
    }

    @Test func quoteRoundTrips() throws {
        for word in ["plain", "with space", "it's", "", "$X", "a\"b", "ünï"] {
            #expect(try CommandWords.split(CommandWords.quote(word)) == [word], "\(word)")
        }
        #expect(CommandWords.quote("sh") == "sh")
        #expect(CommandWords.quote("echo hi") == "'echo hi'")
    }
}
