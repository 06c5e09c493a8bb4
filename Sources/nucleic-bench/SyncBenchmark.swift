#if canImport(Glibc)
import Glibc
#endif
import CSodium
import NucleicProtocol
import NucleicRuntime
import NucleicStore
import NucleicSync
import NucleicWire
import NucleicSystem
import NucleicSockets
import NucleicCommandLine

/// `nucleic-bench sync`: the remote channel (docs/BENCHMARKS.md, "Sync"): Noise handshakes,
/// encrypted frames against raw libsodium on the same buffers, and one busy session fanned out to
/// many subscribers over real TCP on 127.0.0.1.
enum SyncBenchmark: BenchCommand {
    static let name = "sync"
    static let summary = "Noise handshakes/s; frame encryption vs raw ChaCha20-Poly1305; one busy session to 100 subscribers"
    static let usage = """
        usage: nucleic-bench sync [--handshakes N] [--subscribers N] [--events N] [--seed N] [--nucleic PATH]
                                  [--frame-sizes LIST] [--frame-bytes N] [--only handshakes,frames,fanout]

        Three measurements, in this process:

          handshakes   N Noise_IK handshakes, both sides in memory (X25519 and hashing only), then N
                       connects over TCP on 127.0.0.1 to a real RemoteServer: TCP connect, IK,
                       hello, welcome, close (one at a time: the latency a phone sees, not a
                       capacity).
          frames       application messages of 64 B, 1 KiB, 16 KiB and 1 MiB through the frame
                       encoder and decoder (split into Noise messages, flags byte, tag, length
                       prefix), next to raw libsodium crypto_aead_chacha20poly1305_ietf on the
                       same plaintext cut into the same fragments, in place, with the same nonce
                       discipline. The ratio is the channel's overhead over the cipher itself.
          fan-out      one replay session (the generated Claude fixture of `nucleic-bench sessions`,
                       --events partials, replay speed max) with --subscribers paired devices
                       connected over TCP, each subscribed with verbosity full and reading as fast
                       as it can, in this process too. Prints events/s per subscriber and in total,
                       the time from the session's start until the last subscriber saw runFinished,
                       this process's CPU (host and clients both), and whether a subscriber was cut
                       off for backpressure.

        Nothing asserts a time; the same seed gives the same fixture. Build with -c release.

        Options:
          --handshakes N    handshakes per row (default 500)
          --subscribers N   fan-out subscribers (default 100)
          --events N        partials in the fan-out fixture (default 4000)
          --seed N          fixture seed (default 1)
          --nucleic PATH    the nucleic binary (the replay agent; default: next to this one)
          --frame-sizes LIST  the message sizes of the frames rows, in bytes (default
                            64,1024,16384,1048576)
          --frame-bytes N   application bytes per pass of a frames row (default 64 MiB; smaller
                            for a profiler)
          --only LIST       some measurements only: handshakes,frames,fanout (default all)
        """

    struct Options {
        var handshakes = 500
        var subscribers = 100
        var events = 4000
        var seed = 1
        var nucleic: String
        var only: Set<String> = ["handshakes", "frames", "fanout"]
        var frameSizes = [64, 1024, 16 * 1024, 1 << 20]
        var frameBytes = 64 << 20

        init(_ arguments: [String]) throws {
            let args = try ArgumentParser(arguments, valued: ["handshakes", "subscribers", "events", "seed", "nucleic", "only", "frame-sizes", "frame-bytes"],
                                          boolean: [], short: [:], allowsPositionals: false, usage: usage)
            if let list = args["frame-sizes"] {
                let sizes = list.split(separator: ",").compactMap { Int($0) }
                guard !sizes.isEmpty, sizes.count == list.split(separator: ",").count, sizes.allSatisfy({ (1...SecureFrames.maxMessageSize).contains($0) }) else {
                    throw UsageError(message: "--frame-sizes takes sizes in bytes from 1 to \(SecureFrames.maxMessageSize), comma-separated, not '\(list)'", usage: usage)
                }
                frameSizes = sizes
            }
            frameBytes = try args.integer("frame-bytes", default: frameBytes, in: 1...(1 << 34), usage: usage)
            if let list = args["only"] {
                let names = Set(list.split(separator: ",").map(String.init))
                guard !names.isEmpty, names.isSubset(of: only) else {
                    throw UsageError(message: "--only takes handshakes,frames,fanout, not '\(list)'", usage: usage)
                }
                only = names
            }
            handshakes = try args.integer("handshakes", default: handshakes, in: 1...1_000_000, usage: usage)
            subscribers = try args.integer("subscribers", default: subscribers, in: 1...1000, usage: usage)
            events = try args.integer("events", default: events, in: 10...10_000_000, usage: usage)
            seed = try args.integer("seed", default: seed, in: 0...Int.max, usage: usage)
            nucleic = args.nucleicBinary()
        }
    }

    static func run(_ arguments: [String]) throws -> Int32 {
        let options = try Options(arguments)
        _ = sodium_init()
        signal(SIGPIPE, SIG_IGN)
        if options.only.contains("handshakes") {
            let memory = try handshakesInMemory(options.handshakes)
            let tcp = try runBlocking { () async throws -> Double in
                try await handshakesOverTCP(options.handshakes, nucleic: options.nucleic)
            }.get()
            Output.standardOutput("""
                Handshakes (\(options.handshakes) each, one at a time)
                \(Format.table([
                    ["", "per second", "each"],
                    ["IK in memory (both sides)", Format.count(memory), Format.fixed(1e6 / memory, 0) + " µs"],
                    ["TCP + IK + hello/welcome", Format.count(tcp), Format.fixed(1e6 / tcp, 0) + " µs"],
                ]))

                """)
        }
        if options.only.contains("frames") {
            let frames = try frameRows(sizes: options.frameSizes, bytes: options.frameBytes)
            Output.standardOutput("""
                Frames: encoder + decoder vs raw ChaCha20-Poly1305 on the same fragments
                \(Format.table([["message", "next() MB/s", "nextMessage MB/s", "raw MB/s", "next() ÷ raw", "nextMessage ÷ raw"]] + frames.map {
                    [$0.label, Format.fixed($0.framed, 0), Format.fixed($0.borrowed, 0), Format.fixed($0.raw, 0),
                     Format.fixed($0.framed / $0.raw, 2) + "×", Format.fixed($0.borrowed / $0.raw, 2) + "×"]
                }))

                """)
        }
        guard options.only.contains("fanout") else { return 0 }
        let fan = try runBlocking { () async throws -> FanOut in try await fanOut(options) }.get()
        Output.standardOutput("""
            Fan-out: one session, \(fan.events) events, to \(options.subscribers) subscribers over TCP
            \(Format.table([
                ["start → last subscriber saw runFinished", Format.fixed(fan.seconds, 2) + " s"],
                ["events delivered (all subscribers)", Format.count(Double(fan.delivered))],
                ["delivered events/s (total)", Format.count(Double(fan.delivered) / fan.seconds)],
                ["delivered events/s (per subscriber)", Format.count(Double(fan.delivered) / fan.seconds / Double(options.subscribers))],
                ["process CPU s (host + clients)", Format.fixed(fan.cpu, 2)],
                ["subscribers cut off (backpressure)", String(fan.backpressure)],
            ]))
            """)
        return 0
    }

    // MARK: Handshakes

    static func handshakesInMemory(_ count: Int) throws -> Double {
        let host = NoiseKeyPair.generate()
        let device = NoiseKeyPair.generate()
        let start = monotonicSeconds()
        for _ in 0..<count {
            var initiator = try HandshakeState(pattern: .ik, role: .initiator, localStatic: device, remoteStatic: host.publicKey)
            var responder = try HandshakeState(pattern: .ik, role: .responder, localStatic: host)
            _ = try responder.readMessage(try initiator.writeMessage())
            _ = try initiator.readMessage(try responder.writeMessage())
            let a = try initiator.finish()
            let b = try responder.finish()
            blackHole(a.handshakeHash)
            blackHole(b.handshakeHash)
        }
        return Double(count) / (monotonicSeconds() - start)
    }

    static func handshakesOverTCP(_ count: Int, nucleic: String) async throws -> Double {
        let rig = try await SyncRig.make(nucleic: nucleic, devices: 1)
        let device = rig.devices[0]
        let start = monotonicSeconds()
        for _ in 0..<count {
            let client = try await BenchDevice.connect(port: rig.port, hostKey: rig.pairing.hostKey.publicKey, deviceKey: device)
            try await client.send(ClientMsg(.hello(protocolVersion: 1, client: "bench")))
            guard case .welcome = try await client.next()?.body else { throw BenchError(message: "no welcome") }
            client.close()
        }
        let rate = Double(count) / (monotonicSeconds() - start)
        await rig.finish()
        return rate
    }

    // MARK: Frames

    struct FrameRow {
        let label: String
        /// Through `next()`: each message returned as an array.
        let framed: Double
        /// Through `nextMessage(_:)`: each message lent as a view.
        let borrowed: Double
        let raw: Double
    }

    static func frameRows(sizes: [Int], bytes: Int) throws -> [FrameRow] {
        var rows: [FrameRow] = []
        for size in sizes {
            let label = size >= 1 << 20 && size % (1 << 20) == 0 ? "\(size >> 20) MiB" : size >= 1024 && size % 1024 == 0 ? "\(size >> 10) KiB" : "\(size) B"
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let total = max(bytes, size * 8)
            let count = total / size
            // Rounds alternate the two rows, so that load from elsewhere falls on both alike; each
            // keeps its best pass.
            var framedBest = 0.0, borrowedBest = 0.0, rawBest = 0.0
            for _ in 0..<3 {
                framedBest = max(framedBest, try framed(message, count: count, borrowed: false))
                borrowedBest = max(borrowedBest, try framed(message, count: count, borrowed: true))
                rawBest = max(rawBest, raw(message, count: count))
            }
            rows.append(FrameRow(label: label, framed: framedBest, borrowed: borrowedBest, raw: rawBest))
        }
        return rows
    }

    /// Encoder and decoder of a real channel, `count` times; MB/s of application bytes.
    static func framed(_ message: [UInt8], count: Int, borrowed: Bool) throws -> Double {
        let host = NoiseKeyPair.generate()
        var initiator = try HandshakeState(pattern: .ik, role: .initiator, localStatic: NoiseKeyPair.generate(), remoteStatic: host.publicKey)
        var responder = try HandshakeState(pattern: .ik, role: .responder, localStatic: host)
        _ = try responder.readMessage(try initiator.writeMessage())
        _ = try initiator.readMessage(try responder.writeMessage())
        let sending = try initiator.finish().frameCodec()
        let receiving = try responder.finish().frameCodec()
        var encoder = sending.encoder
        var decoder = receiving.decoder
        var best = Double.infinity
        for _ in 0..<1 {
            let start = monotonicSeconds()
            var out: [UInt8] = []
            for _ in 0..<count {
                out.removeAll(keepingCapacity: true)
                try message.withUnsafeBytes { try encoder.encode($0, appendingTo: &out) }
                decoder.append(out)
                let decoded = borrowed ? try decoder.nextMessage({ $0.count }) : try decoder.next().map { blackHole($0); return $0.count }
                guard decoded == message.count else { throw BenchError(message: "frame round trip failed") }
            }
            best = min(best, monotonicSeconds() - start)
        }
        return Double(message.count * count) / best / 1e6
    }

    /// Raw libsodium on the same fragments (65518 bytes at most), in place, encrypt then decrypt.
    static func raw(_ message: [UInt8], count: Int) -> Double {
        var key = [UInt8](repeating: 7, count: 32)
        var buffer = [UInt8](repeating: 0, count: min(message.count, SecureFrames.maxFragmentSize) + 1 + 16)
        var best = Double.infinity
        for _ in 0..<1 {
            var counter: UInt64 = 0
            let start = monotonicSeconds()
            for _ in 0..<count {
                var position = 0
                repeat {
                    let fragment = min(SecureFrames.maxFragmentSize, message.count - position)
                    let length = 1 + fragment
                    message.withUnsafeBytes { source in
                        buffer.withUnsafeMutableBytes { target in
                            target[0] = 0
                            target.baseAddress!.advanced(by: 1).copyMemory(from: source.baseAddress!.advanced(by: position), byteCount: fragment)
                        }
                    }
                    // The nonce on the stack: 4 zero bytes, the counter little-endian.
                    var nonce: (UInt32, UInt64) = (0, 0)
                    var produced: UInt64 = 0
                    withUnsafeMutableBytes(of: &nonce) { n in
                        n.storeBytes(of: counter.littleEndian, toByteOffset: 4, as: UInt64.self)
                        let nonce = n.baseAddress!.assumingMemoryBound(to: UInt8.self)
                        buffer.withUnsafeMutableBufferPointer { b in
                            _ = crypto_aead_chacha20poly1305_ietf_encrypt(b.baseAddress!, &produced, b.baseAddress!, UInt64(length), nil, 0, nil, nonce, &key)
                            var opened: UInt64 = 0
                            _ = crypto_aead_chacha20poly1305_ietf_decrypt(b.baseAddress!, &opened, nil, b.baseAddress!, produced, nil, 0, nonce, &key)
                        }
                    }
                    counter += 1
                    position += fragment
                } while position < message.count
            }
            best = min(best, monotonicSeconds() - start)
        }
        blackHole(buffer)
        return Double(message.count * count) / best / 1e6
    }
}
