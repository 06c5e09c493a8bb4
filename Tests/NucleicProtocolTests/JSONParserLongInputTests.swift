import Foundation
import Testing
@testable import NucleicProtocol
import NucleicTestSupport

/// The parser's fast paths (8-byte string scanning, chunked UTF-8 validation, known keys) only
/// run on long inputs; these compare it with Foundation's JSONSerialization, an independent
/// parser, on long generated strings.
@Suite struct JSONParserLongInputTests {
    static let pieces: [String] = [
        "plain ascii text ", "quote \\\" inside ", "backslash \\\\ here ", "newline \\n and tab \\t ", "unicode \\u00e9\\u2014 ",
        "surrogates \\ud83d\\ude00 ", "café — → ✓ 日本語 😀 ", "/slash\\/ ", "\\r\\b\\f ", "x",
    ]

    func reference(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
    }

    @Test func longStringsMatchAnIndependentParser() throws {
        var rng = SeededGenerator(seed: 11)
        for length in [1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 1000, 5000, 70_000] {
            for _ in 0..<8 {
                var body = ""
                while body.utf8.count < length { body += Self.pieces.randomElement(using: &rng)! }
                let text = "\"\(body)\""
                let ours = try JSONParser.parse(text)
                let theirs = try #require(try reference(text) as? String)
                #expect(ours == .string(theirs), "length \(length)")
            }
        }
    }

    @Test func longObjectsWithCommonAndRareKeysMatch() throws {
        var rng = SeededGenerator(seed: 12)
        let keys = ["type", "message", "content", "text", "id", "name", "input", "tool_use_id", "is_error", "zebra", "ключ", "キー"]
        for _ in 0..<200 {
            let count = Int.random(in: 1...40, using: &rng)
            var seen = Set<String>()
            var parts: [String] = []
            for _ in 0..<count {
                let key = keys.randomElement(using: &rng)! + String(Int.random(in: 0...3, using: &rng))
                guard seen.insert(key).inserted else { continue }
                parts.append("\"\(key)\":\"\(Self.pieces.randomElement(using: &rng)!)\"")
            }
            let text = "{" + parts.joined(separator: ",") + "}"
            guard case .object(let object) = try JSONParser.parse(text) else { Issue.record("not an object"); continue }
            let theirs = try #require(try reference(text) as? [String: String])
            #expect(object.count == theirs.count)
            for entry in object { #expect(entry.value == .string(theirs[entry.key] ?? "<missing>"), "\(entry.key)") }
            #expect(object.keys == parts.map { String($0.dropFirst().prefix { $0 != "\"" }) })
        }
    }

    @Test func invalidUTF8InLongStringsIsReplacedNotTrusted() throws {
        for position in [0, 5, 8, 31, 32, 100, 300] {
            var bytes = Array("\"".utf8) + Array(repeating: UInt8(ascii: "a"), count: 400) + Array("\"".utf8)
            bytes[1 + position] = 0xFF
            let value = try JSONParser.parse(bytes)
            #expect(value.stringValue?.contains("\u{FFFD}") == true, "position \(position)")
            #expect(value.stringValue?.unicodeScalars.count == 400)
        }
    }

    @Test func controlCharactersInLongStringsAreRejectedWherever() {
        for position in [0, 7, 8, 9, 40, 300] {
            var bytes = Array("\"".utf8) + Array(repeating: UInt8(ascii: "b"), count: 400) + Array("\"".utf8)
            bytes[1 + position] = 0x0A
            #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
        }
    }
}
