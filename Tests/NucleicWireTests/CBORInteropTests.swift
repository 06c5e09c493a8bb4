import Foundation
import NucleicProtocol
import Testing
@testable import NucleicWire
import NucleicTestSupport

/// `cbor_peer.py` (cbor2) run once over a batch of requests.
extension PeerPython {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Peers/cbor_peer.py").path

    /// Runs `cbor_peer.py` over `requests` (one per line) and returns its answers, one per request.
    static func run(_ requests: [String]) throws -> [JSONValue] {
        guard let python = path else { throw PeerFailure(missing) }
        // Requests and errors go through files, answers through a pipe read to the end: no
        // pipe can fill while the other side waits.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nucleic-cbor-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("requests.txt")
        let errors = folder.appendingPathComponent("stderr.txt")
        try Data(requests.joined(separator: "\n").utf8 + [0x0a]).write(to: input)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script]
        process.standardInput = try FileHandle(forReadingFrom: input)
        process.standardError = try FileHandle(forWritingTo: errors)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let stderr = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw PeerFailure("cbor_peer.py exited with \(process.terminationStatus): \(stderr)")
        }
        let answers = try data.split(separator: 0x0a).map { try JSONParser.parse($0) }
        guard answers.count == requests.count else { throw PeerFailure("cbor_peer.py answered \(answers.count) of \(requests.count) requests") }
        return answers
    }
}

/// Interop with cbor2 both ways on seeded random values.
@Suite(.enabled(if: PeerPython.path != nil || PeerPython.isCI, "NUCLEIC_PEERS_PYTHON is not set: run eval \"$(scripts/peers.sh)\""))
struct CBORInteropTests {
    static func values(seed: UInt64, count: Int) -> [CBORValue] {
        var rng = SeededGenerator(seed: seed)
        let generator = ValueGenerator(interop: true, maxDepth: 4)
        var values: [CBORValue] = [
            ["type": "approvalRespond", "approvalID": "0190c0de-0000-7000-8000-000000000001", "decision": CBORValue(["behavior": "allow", "updatedInput": ["command": "npm test", "timeout": 120000, "ratio": 0.5]] as JSONValue)],
            .negative(.max), .unsigned(.max), .float(.nan), .float(-0.0), .float(65504), .float(0x1p-24), .undefined,
        ]
        while values.count < count { values.append(generator.value(using: &rng)) }
        return values
    }

    /// Swift encodes, cbor2 decodes: the same value, and cbor2's canonical re-encoding is
    /// byte for byte ours once map keys are in its order.
    @Test func swiftEncodedDecodesInCBOR2() throws {
        let values = Self.values(seed: 0x1_CB02, count: 400)
        var requests: [String] = []
        for value in values {
            requests.append("decode " + hexString(CBOREncoder.encode(value)))
            requests.append("decode " + hexString(CBOREncoder.encode(cbor2Canonical(value))))
        }
        let answers = try PeerPython.run(requests)
        for (i, value) in values.enumerated() {
            let (plain, canonical) = (answers[2 * i], answers[2 * i + 1])
            guard plain["ok"] == true, canonical["ok"] == true else {
                Issue.record("cbor2 refused \(value): \(plain["error"] ?? canonical["error"] ?? nil)")
                continue
            }
            #expect(try Description.value(plain["value"] ?? nil) == value)
            let sorted = cbor2Canonical(value)
            #expect(try Description.value(canonical["value"] ?? nil) == sorted)
            #expect(canonical["canonical"]?.stringValue == hexString(CBOREncoder.encode(sorted)), "\(sorted)")
        }
    }

    /// cbor2 encodes (default: floats as doubles; canonical: shortest floats, sorted keys),
    /// Swift decodes: the same value, and Swift's encoding of the sorted value is cbor2's
    /// canonical bytes.
    @Test func cbor2EncodedDecodesInSwift() throws {
        let values = Self.values(seed: 0x2_CB02, count: 400)
        let answers = try PeerPython.run(values.map { "encode " + JSONWriter.string(Description.of($0)) })
        for (value, answer) in zip(values, answers) {
            guard answer["ok"] == true, let plain = answer["hex"]?.stringValue, let canonical = answer["canonical"]?.stringValue else {
                Issue.record("cbor2 could not encode \(value): \(answer["error"] ?? nil)")
                continue
            }
            #expect(try decode(bytes(hex: plain)) == value, "\(plain)")
            let sorted = cbor2Canonical(value)
            #expect(try decode(bytes(hex: canonical)) == sorted)
            #expect(hexString(CBOREncoder.encode(sorted)) == canonical)
        }
    }

    /// What Swift refuses, cbor2 refuses too (or, for the subset's own choices, documents).
    @Test func bothRefuseInvalidText() throws {
        let answers = try PeerPython.run(["decode 62c328", "decode 63eda080", "decode 7f61c361bcff"])
        for answer in answers { #expect(answer["ok"] == false) }
    }
}
