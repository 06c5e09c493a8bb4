import NucleicRuntime
import Testing

@Suite struct NucleicConfigTests {
    @Test func theFileIsUnderNucleicHomeElseXDG() {
        #expect(NucleicConfig.path(environment: ["NUCLEIC_HOME": "/h", "XDG_CONFIG_HOME": "/x", "HOME": "/u"]) == "/h/config.toml")
        #expect(NucleicConfig.path(environment: ["XDG_CONFIG_HOME": "/x", "HOME": "/u"]) == "/x/nucleic/config.toml")
        #expect(NucleicConfig.path(environment: ["XDG_CONFIG_HOME": "relative", "HOME": "/u"]) == "/u/.config/nucleic/config.toml")
    }

    @Test func precedenceIsFlagThenEnvironmentThenFileThenDefault() throws {
        var config = NucleicConfig()
        try config.set("approval-timeout", "30")
        #expect(config.resolve("approval-timeout", flag: "5", environment: ["NUCLEIC_APPROVAL_TIMEOUT": "9"]) == ("5", .flag))
        #expect(config.resolve("approval-timeout", environment: ["NUCLEIC_APPROVAL_TIMEOUT": "9"]) == ("9", .environment))
        #expect(config.resolve("approval-timeout", environment: ["NUCLEIC_APPROVAL_TIMEOUT": ""]) == ("30", .file))
        #expect(NucleicConfig().resolve("approval-timeout", environment: [:]) == (nil, .default))
    }

    @Test func theTextRoundTripsWithCommentsAndEscapes() throws {
        let text = """
            # mine
            claude-bin = "/opt/my \\"claude\\"/bin"   # a comment
            approval-timeout = 30

            listen = "127.0.0.1:7420"
            """
        let config = try NucleicConfig(parsing: text)
        #expect(config.values == ["claude-bin": "/opt/my \"claude\"/bin", "approval-timeout": "30", "listen": "127.0.0.1:7420"])
        #expect(try NucleicConfig(parsing: config.text) == config)
    }

    @Test(arguments: [
        ("claude-bin", "config.toml:1: expected key = value"),
        ("[table]", "config.toml:1: expected key = value"),
        ("claude = \"/x\"", "unknown setting 'claude' (did you mean 'claude-bin'?)"),
        ("claude-bin = \"/x", "not a complete \"string\""),
        ("claude-bin = /x", "must be a \"quoted string\""),
        ("claude-bin = \"x\"", "claude-bin takes an absolute path"),
        ("approval-timeout = -3", "approval-timeout takes a positive number of seconds"),
        ("idle-timeout = \"soon\"", "idle-timeout takes a duration"),
    ])
    func badTextIsRefusedWithItsLine(_ text: String, _ message: String) {
        #expect(throws: ConfigError.self) { try NucleicConfig(parsing: text) }
        do { _ = try NucleicConfig(parsing: text) } catch { #expect(error.message.contains(message), "\(error.message)") }
    }
}
