import NucleicRuntime
import Testing

/// The push settings refuse what the daemon could not use, before a daemon reads them.
@Suite struct PushConfigTests {
    @Test func thePushSettingsTakeWhatTheyNeedAndRefuseTheRest() throws {
        func problem(_ key: String, _ value: String) -> String? { NucleicConfig.setting(key)?.problem(with: value) }
        #expect(problem("webpush-subject", "mailto:ops@shop.example") == nil && problem("webpush-subject", "https://shop.example/contact") == nil)
        #expect(problem("webpush-subject", "ops@shop.example") != nil && problem("webpush-subject", "mailto:a b") != nil)
        #expect(problem("apns-key-file", "/etc/nucleic/AuthKey_ABCDE12345.p8") == nil && problem("apns-key-file", "AuthKey.p8") != nil)
        #expect(problem("apns-key-id", "ABCDE12345") == nil && problem("apns-key-id", "ABCDE") != nil && problem("apns-key-id", "ABCDE-1234") != nil)
        #expect(problem("apns-team-id", "TEAM123456") == nil && problem("apns-team-id", "TEAM 12345") != nil)
        #expect(problem("apns-topic", "com.example.nucleic") == nil && problem("apns-topic", "") != nil)
        #expect(problem("apns-environment", "sandbox") == nil && problem("apns-environment", "production") == nil && problem("apns-environment", "dev") != nil)
        #expect(problem("apns-endpoint", "https://127.0.0.1:8443") == nil && problem("apns-endpoint", "http://127.0.0.1:8443") != nil)
        #expect(problem("apns-ca-file", "/tmp/ca.pem") == nil && problem("apns-ca-file", "ca.pem") != nil)
        var config = NucleicConfig()
        #expect(throws: ConfigError.self) { try config.set("apns-key-id", "short") }
        try config.set("apns-environment", "sandbox")
        #expect(config.resolve("apns-environment", environment: [:]) == ("sandbox", .file))
        #expect(config.resolve("apns-environment", environment: ["NUCLEIC_APNS_ENVIRONMENT": "production"]) == ("production", .environment))
    }
}
