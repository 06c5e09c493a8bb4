public import NucleicProtocol

/// How to find, launch and speak to one backend: the parsed form of `Adapters/<name>.json`.
///
/// docs/ADAPTERS.md documents every field. Capabilities are declared in the manifest so a reader
/// sees them in one place, and checked against the codec's own: a manifest cannot promise what
/// its codec cannot carry.
public struct AdapterManifest: Sendable, Hashable {
    public var name: String
    public var displayName: String
    /// The address the agent is credited with in `Co-authored-by:` trailers (the backend's
    /// no-reply address).
    public var coAuthorEmail: String?
    /// Which codec speaks this backend's protocol (`claude`, `codex`).
    public var codec: String
    /// The environment variable that overrides the binary (`NUCLEIC_CLAUDE_BIN`).
    public var binaryEnvironment: String?
    /// Names looked up on `PATH`, in order.
    public var binaryNames: [String]
    /// `binary.env` holds a whole command line, not a path (the generic `acp` backend: any agent
    /// that speaks the protocol, given as `--agent-command` or the `acp-command` setting).
    public var binaryIsCommandLine: Bool
    public var arguments: [String]
    /// Added when a session continues an earlier one; `{resumeID}` is replaced.
    public var resumeArguments: [String]
    /// Added when a model is chosen; `{model}` is replaced.
    public var modelArguments: [String]
    /// Set in the agent's environment (on top of the host's).
    public var environment: [String: String]
    /// ACP: the agent's session mode to switch to before the first prompt (one in which the
    /// agent asks before it acts, so that the host's rules decide).
    public var sessionMode: String?
    public var capabilities: BackendCapabilities

    public init(json: JSONValue) throws(ShapeError) {
        let f = try Fields(json, "adapter manifest")
        guard try f.int("manifest") == 1 else { throw ShapeError("adapter manifest: unsupported \"manifest\" version (this build reads 1)") }
        name = try f.string("name")
        displayName = try f.optionalString("displayName") ?? name
        coAuthorEmail = try f.optionalString("coAuthorEmail")
        codec = try f.string("codec")
        let binary = try Fields(try f.value("binary"), "adapter manifest binary")
        binaryEnvironment = try binary.optionalString("env")
        binaryNames = try Self.strings(binary["names"], "binary.names")
        binaryIsCommandLine = try binary.bool("commandLine", default: false)
        arguments = try Self.strings(f["arguments"], "arguments")
        resumeArguments = try Self.strings(f["resumeArguments"], "resumeArguments")
        modelArguments = try Self.strings(f["modelArguments"], "modelArguments")
        var environment: [String: String] = [:]
        for entry in f["environment"]?.objectValue ?? JSONObject() {
            guard let value = entry.value.stringValue else { throw ShapeError("adapter manifest: environment values must be strings") }
            environment[entry.key] = value
        }
        self.environment = environment
        sessionMode = try f.optionalString("sessionMode")
        capabilities = try f.decode("capabilities")
        guard !binaryNames.isEmpty || binaryEnvironment != nil else {
            throw ShapeError("adapter manifest \(name): give binary.names or binary.env")
        }
        if let codecCapabilities = Codecs.capabilities(codec), codecCapabilities != capabilities {
            throw ShapeError("adapter manifest \(name): capabilities \(JSONWriter.string(capabilities.json)) differ from what the \(codec) codec can do, \(JSONWriter.string(codecCapabilities.json))")
        }
        guard Codecs.capabilities(codec) != nil else {
            throw ShapeError("adapter manifest \(name): unknown codec \"\(codec)\" (this build has \(Codecs.names.joined(separator: ", ")))")
        }
    }

    /// The argument list for one launch.
    public func launchArguments(model: String? = nil, resumeID: String? = nil) -> [String] {
        var args = arguments
        if let model { args += modelArguments.map { $0.replacingPlaceholder("{model}", with: model) } }
        if let resumeID { args += resumeArguments.map { $0.replacingPlaceholder("{resumeID}", with: resumeID) } }
        return args
    }

    private static func strings(_ value: JSONValue?, _ field: String) throws(ShapeError) -> [String] {
        guard let value else { return [] }
        guard let array = value.arrayValue else { throw ShapeError("adapter manifest: \(field) must be an array of strings") }
        let strings = array.compactMap(\.stringValue)
        guard strings.count == array.count else { throw ShapeError("adapter manifest: \(field) must be an array of strings") }
        return strings
    }
}

/// The codecs this build has, by the name manifests use.
public enum Codecs {
    public static let names = ["claude", "codex", "acp"]

    public static func capabilities(_ name: String) -> BackendCapabilities? {
        switch name {
        case "claude": .claude
        case "codex": .codex
        case "acp": .acp
        default: nil
        }
    }

    /// A fresh codec for one session. `backend` is the manifest's name the session was started
    /// with (`kimi`, `vibe`): what the ACP codec's `sessionStarted` and messages say; the codec
    /// name when nil.
    public static func make(_ name: String, backend: String? = nil,
                            makeApprovalID: @escaping @Sendable () -> ApprovalID = { ApprovalID.make() }) -> (any AgentCodec)? {
        switch name {
        case "claude": ClaudeCodec(makeApprovalID: makeApprovalID)
        case "codex": CodexCodec(makeApprovalID: makeApprovalID)
        case "acp": AcpCodec(backend: backend ?? "acp", makeApprovalID: makeApprovalID)
        default: nil
        }
    }
}

extension String {
    /// Every occurrence of `placeholder` replaced by `value` (no Foundation in this module).
    func replacingPlaceholder(_ placeholder: String, with value: String) -> String {
        let pattern = Array(placeholder)
        let characters = Array(self)
        guard !pattern.isEmpty else { return self }
        var result = ""
        var i = 0
        while i < characters.count {
            if i + pattern.count <= characters.count, Array(characters[i..<(i + pattern.count)]) == pattern {
                result += value
                i += pattern.count
            } else {
                result.append(characters[i])
                i += 1
            }
        }
        return result
    }
}
