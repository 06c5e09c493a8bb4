import Foundation
import NucleicAdapters
import NucleicProtocol
import Testing

@Suite struct AdapterManifestTests {
    static let adapters = Fixture.root.deletingLastPathComponent().appendingPathComponent("Adapters")

    func load(_ name: String) throws -> AdapterManifest {
        try AdapterManifest(json: JSONParser.parse(String(contentsOf: Self.adapters.appendingPathComponent("\(name).json"), encoding: .utf8)))
    }

    @Test func theShippedManifestsLoadAndMatchTheirCodecs() throws {
        let claude = try load("claude")
        #expect(claude.codec == "claude" && claude.binaryEnvironment == "NUCLEIC_CLAUDE_BIN" && claude.binaryNames == ["claude"])
        #expect(claude.capabilities == .claude)
        #expect(claude.arguments.contains("--permission-prompt-tool") && claude.arguments.contains("stdio"))
        #expect(claude.launchArguments(model: "opus", resumeID: "abc").suffix(4) == ["--model", "opus", "--resume", "abc"])
        let codex = try load("codex")
        #expect(codex.capabilities == .codex && !codex.capabilities.canModifyToolInput)
        #expect(codex.launchArguments(resumeID: "t1") == ["app-server"])
    }

    /// The Agent Client Protocol agents: each runs its own ACP entry point through the acp codec.
    @Test func theAcpManifestsNameTheirEntryPoints() throws {
        let expected: [String: [String]] = [
            "kimi": ["kimi", "acp"], "vibe": ["vibe-acp"], "fast-agent": ["fast-agent-acp"], "gemini": ["gemini", "--experimental-acp"],
            "qwen": ["qwen", "--experimental-acp"], "opencode": ["opencode", "acp"], "goose": ["goose", "acp"],
            "claude-acp": ["claude-code-acp"], "codex-acp": ["codex-acp"],
        ]
        for (name, argv) in expected {
            let manifest = try load(name)
            #expect(manifest.name == name && manifest.codec == "acp" && manifest.capabilities == .acp, "\(name)")
            #expect([manifest.binaryNames.first ?? ""] + manifest.launchArguments(resumeID: "s-1") == argv, "\(name) resumes in-band")
            #expect(manifest.binaryEnvironment?.hasPrefix("NUCLEIC_") == true && !manifest.binaryIsCommandLine)
        }
        let generic = try load("acp")
        #expect(generic.binaryIsCommandLine && generic.binaryEnvironment == "NUCLEIC_ACP_COMMAND" && generic.binaryNames.isEmpty)
    }

    @Test func aManifestCannotPromiseWhatItsCodecCannotDo() throws {
        var json = try JSONParser.parse(String(contentsOf: Self.adapters.appendingPathComponent("codex.json"), encoding: .utf8))
        guard case .object(var object) = json, case .object(var capabilities)? = object["capabilities"] else { Issue.record("shape"); return }
        capabilities["canModifyToolInput"] = true
        object["capabilities"] = .object(capabilities)
        json = .object(object)
        #expect { try AdapterManifest(json: json) } throws: { "\($0)".contains("differ from what the codex codec can do") }
    }

    @Test func badManifestsSayWhatIsWrong() {
        let cases: [(JSONValue, String)] = [
            (["manifest": 2], "unsupported \"manifest\" version"),
            (["manifest": 1, "name": "x", "codec": "nope", "binary": ["names": ["x"]], "capabilities": [:]], "unknown codec \"nope\""),
            (["manifest": 1, "name": "x", "codec": "claude", "binary": [:], "capabilities": BackendCapabilities.claude.json], "give binary.names or binary.env"),
            (["manifest": 1, "name": "x", "codec": "claude", "binary": ["names": [1]], "capabilities": [:]], "binary.names must be an array of strings"),
            (["manifest": 1, "codec": "claude"], "missing \"name\""),
        ]
        for (json, message) in cases {
            #expect { try AdapterManifest(json: json) } throws: { "\($0)".contains(message) }
        }
    }
}
