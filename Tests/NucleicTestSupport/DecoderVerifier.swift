/// Checks a decoder against one input the way every decoder here must hold up (the model is
/// NIO's `ByteToMessageDecoderVerifier`): fed whole, byte by byte and in seeded random chunks it
/// gives the same outputs; cut at every byte it gives the outputs before the cut and reports the
/// rest; with bytes after the input it never gives a wrong output.
///
/// Two shapes of decoder:
/// - a stream decoder (`verifyStream`: frames, secure frames, lines): bytes are appended in
///   pieces, outputs taken as they complete, and `finish` says whether the stream ended cleanly;
/// - a message decoder (`verifyMessage`: CBOR, JSON): one whole input, one value.
///
/// A failed check throws `DecoderVerifier.Failure`, which says which check, on which chunking or
/// cut, with which seed, so it replays.
public enum DecoderVerifier {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// One run of a stream decoder: `feed` appends bytes and returns the outputs that completed,
    /// `finish` ends the stream and returns what ending it produced (a line framer's last
    /// unterminated line) or throws if the stream ended inside a message.
    public struct StreamRun<Output> {
        public var feed: ([UInt8]) throws -> [Output]
        public var finish: () throws -> [Output]
        public init(feed: @escaping ([UInt8]) throws -> [Output], finish: @escaping () throws -> [Output]) {
            self.feed = feed
            self.finish = finish
        }
    }

    /// What ending a stream inside a message does.
    public enum Truncation<Output> {
        /// `finish` throws (a frame decoder: the peer hung up mid-frame).
        case fails
        /// `finish` hands the rest over as one more output; `matches(output, rest)` says whether
        /// that output is right for the bytes after the last complete message.
        case yieldsRest(matches: (Output, [UInt8]) -> Bool)
    }

    /// Verifies a stream decoder on `input`, which decodes to `expected` and ends cleanly.
    ///
    /// - `makeRun` makes a fresh decoder for each run.
    /// - Seeded random chunks: `rounds` chunkings of sizes in 1...`maxChunk`, from `seed`.
    /// - Every truncation: for each cut, the outputs are the messages that end before it; `finish`
    ///   succeeds exactly at a message boundary, otherwise follows `truncation`.
    /// - `trailing`: each is appended after the input; the outputs start with `expected`, and
    ///   the decoder then throws (from `feed` or `finish`) or, with `.yieldsRest`, does not throw
    ///   (the trailing bytes are more of the stream; pick ones that start a new message).
    public static func verifyStream<Output: Equatable>(
        _ input: [UInt8], expected: [Output], seed: UInt64, rounds: Int = 20, maxChunk: Int? = nil,
        truncation: Truncation<Output> = .fails, trailing: [[UInt8]] = [],
        makeRun: () throws -> StreamRun<Output>
    ) throws {
        func run(_ chunks: [[UInt8]]) throws -> [Output] {
            let decoder = try makeRun()
            var outputs: [Output] = []
            for chunk in chunks { outputs += try decoder.feed(chunk) }
            return outputs + (try decoder.finish())
        }
        func check(_ what: String, _ chunks: [[UInt8]]) throws {
            let outputs: [Output]
            do { outputs = try run(chunks) } catch { throw Failure("\(what): threw \(error)") }
            guard outputs == expected else {
                throw Failure("\(what): \(outputs.count) outputs, expected \(expected.count)\(firstDifference(outputs, expected))")
            }
        }
        try check("fed whole", [input])
        // Byte by byte, noting how many outputs are complete after each byte: the boundaries.
        let decoder = try makeRun()
        var completeAfter = [0]
        var outputs: [Output] = []
        do {
            for byte in input {
                outputs += try decoder.feed([byte])
                completeAfter.append(outputs.count)
            }
            outputs += try decoder.finish()
        } catch {
            throw Failure("fed byte by byte: threw \(error) after \(completeAfter.count - 1) bytes")
        }
        guard outputs == expected else {
            throw Failure("fed byte by byte: \(outputs.count) outputs, expected \(expected.count)\(firstDifference(outputs, expected))")
        }
        var rng = SeededGenerator(seed: seed)
        let largest = max(1, maxChunk ?? max(1, input.count / 3))
        for round in 0..<rounds {
            try check("random chunks (seed \(seed), round \(round))", randomChunks(input, maxChunk: largest, using: &rng))
        }
        // Every truncation.
        var lastBoundary = 0
        for cut in 0..<input.count {
            let complete = completeAfter[cut]
            if cut > 0, completeAfter[cut] > completeAfter[cut - 1] { lastBoundary = cut }
            let atBoundary = cut == 0 || completeAfter[cut] > completeAfter[cut - 1]
            let decoder = try makeRun()
            let fed: [Output]
            do { fed = try decoder.feed(Array(input[..<cut])) } catch { throw Failure("cut at \(cut): feed threw \(error)") }
            guard fed == Array(expected.prefix(complete)) else {
                throw Failure("cut at \(cut): \(fed.count) outputs, expected the \(complete) before the cut")
            }
            let ending: Result<[Output], any Error> = Result { try decoder.finish() }
            switch (atBoundary, ending, truncation) {
            case (true, .success(let rest), _):
                guard rest.isEmpty else { throw Failure("cut at \(cut), a boundary: finish gave \(rest.count) more outputs") }
            case (true, .failure(let error), _):
                throw Failure("cut at \(cut), a boundary: finish threw \(error)")
            case (false, .success, .fails):
                throw Failure("cut at \(cut), inside a message: finish did not report the truncation")
            case (false, .failure, .fails):
                break
            case (false, .success(let rest), .yieldsRest(let matches)):
                guard rest.count == 1, matches(rest[0], Array(input[lastBoundary..<cut])) else {
                    throw Failure("cut at \(cut), inside a message: finish gave \(rest.count) outputs, not the rest")
                }
            case (false, .failure(let error), .yieldsRest):
                throw Failure("cut at \(cut), inside a message: finish threw \(error)")
            }
        }
        // Trailing bytes.
        for extra in trailing {
            let decoder = try makeRun()
            var outputs: [Output] = []
            var failed = false
            do {
                outputs += try decoder.feed(input + extra)
                outputs += try decoder.finish()
            } catch { failed = true }
            guard Array(outputs.prefix(expected.count)) == Array(expected.prefix(outputs.count)) else {
                throw Failure("with trailing \(extra): the outputs differ from the expected ones\(firstDifference(outputs, expected))")
            }
            switch truncation {
            case .fails:
                guard failed, outputs.count <= expected.count else {
                    throw Failure("with trailing \(extra): \(outputs.count) outputs and no error, expected \(expected.count) then an error")
                }
            case .yieldsRest:
                // Trailing bytes are more of the stream: the outputs after the expected ones are theirs.
                guard !failed else { throw Failure("with trailing \(extra): threw") }
            }
        }
    }

    /// Verifies a message decoder on `input`, which decodes to `expected`: decoded from an array
    /// and from a slice that does not start at index 0; every proper prefix is refused (pick an
    /// input no prefix of which is a value: a container, not a bare number); each of `trailing`
    /// after it is refused.
    public static func verifyMessage<Output: Equatable>(
        _ input: [UInt8], expected: Output, trailing: [[UInt8]] = [[0x00], [0xFF]],
        decode: (ArraySlice<UInt8>) throws -> Output
    ) throws {
        do {
            let whole = try decode(input[...])
            guard whole == expected else { throw Failure("fed whole: decoded \(whole), expected \(expected)") }
            // The same bytes inside a larger buffer: a decoder must use the slice's own indices.
            let padded = [0xAB, 0xCD] + input + [0xEF]
            let slice = try decode(padded[2..<(2 + input.count)])
            guard slice == expected else { throw Failure("from a slice at offset 2: decoded \(slice), expected \(expected)") }
        } catch let failure as Failure { throw failure } catch {
            throw Failure("fed whole: threw \(error)")
        }
        for cut in 0..<input.count {
            if let value = try? decode(input[..<cut]) {
                throw Failure("cut at \(cut) of \(input.count): decoded \(value) instead of refusing the truncation")
            }
        }
        for extra in trailing {
            if let value = try? decode((input + extra)[...]) {
                throw Failure("with trailing \(extra): decoded \(value) instead of refusing the trailing bytes")
            }
        }
    }

    /// `bytes` cut into pieces of random sizes in 1...`maxChunk`.
    public static func randomChunks(_ bytes: [UInt8], maxChunk: Int, using rng: inout some RandomNumberGenerator) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var index = 0
        while index < bytes.count {
            let size = min(bytes.count - index, Int.random(in: 1...max(1, maxChunk), using: &rng))
            chunks.append(Array(bytes[index..<(index + size)]))
            index += size
        }
        return chunks
    }

    private static func firstDifference<Output: Equatable>(_ outputs: [Output], _ expected: [Output]) -> String {
        guard let index = zip(outputs, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset else { return "" }
        return "; output \(index) differs"
    }
}
