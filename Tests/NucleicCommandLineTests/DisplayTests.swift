import NucleicCommandLine
import Testing

/// --color, --no-pager, NO_COLOR and the pager's precedence, as values.
@Suite struct DisplayTests {
    typealias When = DisplayOptions.ColorWhen

    @Test(arguments: [
        (["ls"], DisplayOptions(), ["ls"]),
        (["--no-pager", "log", "1"], DisplayOptions(pager: false), ["log", "1"]),
        (["log", "1", "--no-pager"], DisplayOptions(pager: false), ["log", "1"]),
        (["--color=never", "diff", "1"], DisplayOptions(color: .never), ["diff", "1"]),
        (["diff", "--color", "always", "1"], DisplayOptions(color: .always), ["diff", "1"]),
        (["--color", "diff", "1"], DisplayOptions(color: .always), ["diff", "1"]),
        (["diff", "1", "--color=auto", "--stat"], DisplayOptions(color: .auto), ["diff", "1", "--stat"]),
        (["send", "1", "--", "--no-pager", "--color=never"], DisplayOptions(), ["send", "1", "--", "--no-pager", "--color=never"]),
    ])
    func theDisplayOptionsAreTakenOutWhereverTheyAre(_ arguments: [String], _ options: DisplayOptions, _ rest: [String]) throws {
        var args = arguments
        #expect(try DisplayOptions.take(&args) == options)
        #expect(args == rest)
    }

    @Test func aColourThatIsNoChoiceIsAUsageError() {
        var args = ["--color=sometimes", "ls"]
        #expect(throws: UsageError.self) { try DisplayOptions.take(&args) }
        do { _ = try DisplayOptions.take(&args) } catch { #expect(error.message == "--color takes auto, always or never, not 'sometimes'") }
    }

    @Test(arguments: [
        (When.auto, true, [String: String](), true),
        (.auto, false, [:], false),
        (.auto, true, ["NO_COLOR": "1"], false),
        (.auto, true, ["NO_COLOR": ""], true),  // no-color.org: set to something
        (.auto, true, ["TERM": "dumb"], false),
        (.always, false, ["NO_COLOR": "1"], true),
        (.never, true, [:], false),
    ])
    func colourIsForATerminalUnlessAsked(_ when: When, _ terminal: Bool, _ environment: [String: String], _ expected: Bool) {
        #expect(DisplayOptions(color: when).colors(isTerminal: terminal, environment: environment) == expected)
    }

    @Test(arguments: [
        (true, true, [String: String](), nil as String?, "less -FRX" as String?),
        (true, false, [:], nil, nil),  // not a terminal
        (false, true, [:], nil, nil),  // --no-pager
        (true, true, ["PAGER": "more"], nil, "more"),
        (true, true, ["PAGER": "more", "NUCLEIC_PAGER": "most"], nil, "most"),
        (true, true, ["PAGER": "more", "NUCLEIC_PAGER": ""], nil, nil),
        (true, true, ["NUCLEIC_PAGER": "cat"], nil, nil),
        (true, true, ["PAGER": "more"], "off", nil),
        (true, true, ["PAGER": "more"], "false", nil),
        (true, true, ["PAGER": "more"], "on", "more"),
        (true, true, [:], "true", "less -FRX"),
        (true, true, ["PAGER": "more"], "less -S", "less -S"),
        (true, true, ["NUCLEIC_PAGER": "most"], "off", "most"),
        (true, true, ["PAGER": ""], nil, nil),
    ])
    func thePagerIsTheFirstThatIsSet(_ pager: Bool, _ terminal: Bool, _ environment: [String: String], _ setting: String?, _ expected: String?) {
        #expect(DisplayOptions(pager: pager).pagerCommand(isTerminal: terminal, environment: environment, setting: setting) == expected)
    }

    @Test func aDiffIsColouredLineByLineAsGitColoursIt() {
        let patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same"
        #expect(Colour.diff(patch, enabled: false) == patch)
        let e = "\u{1B}["
        #expect(Colour.diff(patch, enabled: true) == """
            \(e)1mdiff --git a/x b/x\(e)0m
            \(e)1m--- a/x\(e)0m
            \(e)1m+++ b/x\(e)0m
            \(e)36m@@ -1 +1 @@\(e)0m
            \(e)31m-old\(e)0m
            \(e)32m+new\(e)0m
             same
            """)
    }

    @Test func risksAreColouredByWhatTheyCanDo() {
        #expect(Colour.risk("destructive", enabled: true) == "\u{1B}[1;31mdestructive\u{1B}[0m")
        #expect(Colour.risk("network    ", enabled: true) == "\u{1B}[33mnetwork    \u{1B}[0m")
        #expect(Colour.risk("readOnly", enabled: false) == "readOnly")
    }
}
