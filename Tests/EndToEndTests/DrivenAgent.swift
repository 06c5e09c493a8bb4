import Foundation
import NucleicHarness
import NucleicAdapters
import NucleicProtocol
import NucleicRuntime

/// A real agent CLI driven through its codec the way the host will drive it: stdout lines through
/// the line framer and the codec, the codec's lines to stdin, a script answering approvals.
/// Everything both ways is kept so tests can check events against the raw lines.
actor DrivenAgent {
    /// What the script wants done after an event.
    enum Step: Sendable {
        case send(HostIntent)
        /// Send after a pause (an interrupt while a tool runs).
        case sendAfter(Duration, HostIntent)
        /// Send, expecting the codec to refuse; then send the fallback instead.
        case sendExpectingRefusal(HostIntent, fallback: HostIntent)
    }

    typealias Script = @Sendable (AgentEvent) -> [Step]

    let process: ChildProcess
    private var codec: any AgentCodec
    private var framer = LineFramer()
    private let script: Script
    private(set) var events: [AgentEvent] = []
    private(set) var agentLines: [String] = []
    private(set) var hostLines: [String] = []
    private(set) var refusals: [any Error] = []
    private(set) var writeFailures: [String] = []
    private var runsFinished = 0

    init(process: ChildProcess, codec: any AgentCodec, script: @escaping Script) {
        self.process = process
        self.codec = codec
        self.script = script
    }

    /// Starts the session and drives it until `runs` turns have finished (or the agent exits, or
    /// `timeout` passes), then closes stdin and waits for the agent to exit.
    func run(_ options: SessionStartOptions, runs: Int, timeout: Duration = .seconds(60)) async throws {
        let watchdog = Task { [process] in
            try await Task.sleep(for: timeout)
            _ = await process.terminate(grace: .seconds(2))
        }
        defer { watchdog.cancel() }
        await apply(codec.start(options, now: .now()))
        for await chunk in process.stdout {
            for output in framer.feed(chunk) { await take(output) }
            if runsFinished >= runs { break }
        }
        process.closeStdin()
        if await process.wait(timeout: .seconds(10)) == nil { _ = await process.terminate(grace: .seconds(2)) }
        guard runsFinished >= runs else {
            throw PeerError("""
                the agent stopped after \(runsFinished) of \(runs) runs (\(process.exitStatus.map { "\($0)" } ?? "running"))
                events: \(events.map(\.kind))
                refusals: \(refusals)
                last host lines: \(hostLines.suffix(3).joined(separator: "\n"))
                last agent lines: \(agentLines.suffix(4).map { $0.prefix(400) }.joined(separator: "\n"))
                stderr: \(process.stderrTail(maxBytes: 2000))
                """)
        }
    }

    private func take(_ output: LineFramer.Output) async {
        switch output {
        case .line(let bytes):
            agentLines.append(String(decoding: bytes, as: UTF8.self))
            await apply(codec.receive(line: bytes, now: .now()))
        case .overLimit(let preview, let count):
            await apply(codec.overLimit(preview: preview, byteCount: count))
        }
    }

    private func apply(_ output: CodecOutput) async {
        for line in output.lines { await write(line) }
        for event in output.events {
            events.append(event)
            if case .runFinished = event { runsFinished += 1 }
            for step in script(event) { await perform(step) }
        }
    }

    private func perform(_ step: Step) async {
        switch step {
        case .send(let intent):
            await send(intent)
        case .sendAfter(let delay, let intent):
            Task {
                try? await Task.sleep(for: delay)
                await self.send(intent)
            }
        case .sendExpectingRefusal(let intent, let fallback):
            do {
                let output = try codec.send(intent, now: .now())
                writeFailures.append("the codec accepted \(intent) that it should have refused: \(output.lines)")
                await apply(output)
            } catch {
                refusals.append(error)
                await send(fallback)
            }
        }
    }

    func send(_ intent: HostIntent) async {
        do {
            await apply(try codec.send(intent, now: .now()))
        } catch {
            refusals.append(error)
        }
    }

    private func write(_ line: String) async {
        hostLines.append(line)
        do { try await process.write(line: line) } catch { writeFailures.append("\(error)") }
    }
}
