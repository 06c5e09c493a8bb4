#!/usr/bin/env python3
"""Records fixtures of the real Codex CLI `app-server` driven against mock_openai.py.

Usage:
  record_codex.py [--scenario NAME ...|--all] [--out Fixtures/codex] [--codex PATH] [--keep] [-v]

For each scenario: starts a private scratch git repository, CODEX_HOME and HOME, runs
`codex app-server -c model_provider=mock ...` in the repository, plays the host's side (initialize,
thread/start, turn/start, scripted answers to approvals and questions, interrupts), captures every
line in both directions (stderr lines as `err`) with fixturelib.FixtureWriter, normalizes the
volatile values and writes `<out>/<scenario>.jsonl` (DESIGN.md §6).

The codex binary is --codex, else $NUCLEIC_CODEX_BIN (`eval "$(scripts/peers.sh)"`), else `codex`
on PATH. The mock model API is started once and shared (it is stateless per conversation).

Stability (docs/notes/codex-wire.md §15): before every message the host sends, the recorder waits
until Codex has been quiet for 0.25 s, so that the interleaving of the two directions does not
depend on timing. stdout and stderr have no order between them, so err lines get canonical places
(startup lines first, later ones at the end of their stretch between two host messages). Races
inside Codex are settled by re-recording a scenario until its `canonical` predicate holds.
Normalization rewrites uuids, timestamps, durations, process ids, temp paths, the port and the
host name. Recording twice with an unchanged CLI gives identical files (`--check N` records every
scenario N more times in memory and reports any difference).

Scenarios (mock side in mock_openai.py; the table in docs/notes/codex-wire.md §15 says what each
fixture shows): plain, tool-allow, deny-continue, cancel, session-accept, file-change,
file-decline, file-session, interrupt, followup, api-error, server-error, stream-error, two-tools,
reasoning, question, exec-fail, output-stream, sandbox-denied, sandbox-denied-fast,
protocol-errors, resume.
"""
import argparse
import json
import os
import queue
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fixturelib  # noqa: E402

MODEL = "gpt-5.5"
CLIENT_INFO = {"name": "nucleic", "title": None, "version": "0.1.0"}
FIXTURE_ROOT = "/tmp/nucleic-fixture"
SANDBOX_PROBE = "/var/tmp/nucleic-sandbox-probe.txt"   # what sandbox-denied* try to write
QUIET = 0.25            # seconds of silence before the host sends its next message
TURN_TIMEOUT = 20.0


# ---------------------------------------------------------------------------------------------
# The mock model API


class Mock:
    def __init__(self, log_path=None):
        argv = [sys.executable, os.path.join(HERE, "mock_openai.py"), "--port", "0"]
        if log_path:
            argv += ["--log", log_path]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline().split()
        if len(first) != 2 or first[0] != "PORT":
            raise RuntimeError("mock_openai.py did not print its port: %r" % first)
        self.port = int(first[1])

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ---------------------------------------------------------------------------------------------
# One codex app-server process, played from the host's side


class CodexProcess:
    def __init__(self, codex, port, root, scenario, extra_config=(), writer=None, verbose=False):
        self.root = root
        self.repo = os.path.join(root, "repo")
        self.codex_home = os.path.join(root, "codex-home")
        self.home = os.path.join(root, "home")
        self.verbose = verbose
        self.argv = [codex, "app-server",
                     "-c", "model_provider=mock",
                     "-c", "model_providers.mock.name=mock",
                     "-c", "model_providers.mock.base_url=http://127.0.0.1:%d/v1" % port,
                     "-c", "model_providers.mock.wire_api=responses",
                     "-c", "model_providers.mock.env_key=MOCK_API_KEY"]
        for kv in extra_config:
            self.argv += ["-c", kv]
        env = {
            "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "HOME": self.home,
            "CODEX_HOME": self.codex_home,
            "MOCK_API_KEY": "test",
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "TZ": "UTC",
        }
        self.writer = writer or fixturelib.FixtureWriter("codex", cli_version(codex), self.argv, scenario)
        self.lock = threading.Lock()
        self.queue = queue.Queue()
        self.last_activity = time.monotonic()
        self.proc = subprocess.Popen(self.argv, cwd=self.repo, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.readers = [threading.Thread(target=self._read, args=(self.proc.stdout, "out"), daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, "err"), daemon=True)]
        for r in self.readers:
            r.start()

    def _read(self, stream, direction):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="replace").rstrip("\n")
            with self.lock:
                self.writer.add(direction, line)
                self.last_activity = time.monotonic()
            if self.verbose:
                sys.stderr.write("  %s %s\n" % ("<" if direction == "out" else "!", line[:300]))
            if direction == "out":
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                self.queue.put(msg)
        self.queue.put(None if direction == "out" else {"__eof__": direction})

    # -- sending

    def quiet(self, seconds=QUIET, limit=5.0):
        """Waits until neither stdout nor stderr produced a line for `seconds`."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            with self.lock:
                idle = time.monotonic() - self.last_activity
            if idle >= seconds:
                return
            time.sleep(min(0.05, seconds - idle + 0.005))

    def send(self, obj, settle=True):
        if settle:
            self.quiet()
        line = json.dumps(obj, separators=(",", ":"))
        with self.lock:
            self.writer.add("in", line)
            self.last_activity = time.monotonic()
        if self.verbose:
            sys.stderr.write("  > %s\n" % line[:300])
        self.proc.stdin.write((line + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def send_raw(self, line):
        self.quiet()
        with self.lock:
            self.writer.add("in", line)
            self.last_activity = time.monotonic()
        self.proc.stdin.write((line + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    # -- receiving

    def next(self, timeout):
        try:
            msg = self.queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if msg is None:
            raise EOFError("codex closed stdout")
        return msg

    def wait_for(self, pred, timeout=TURN_TIMEOUT, on_request=None):
        """Reads messages until pred(msg); server requests go to on_request (if given) meanwhile."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0:
                raise TimeoutError("timed out waiting")
            msg = self.next(left)
            if msg is None or "__eof__" in msg:
                continue
            if pred(msg):
                return msg
            if on_request is not None and "method" in msg and "id" in msg:
                on_request(msg)

    def request(self, rid, method, params, timeout=TURN_TIMEOUT):
        self.send({"id": rid, "method": method, "params": params})
        return self.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)

    # -- host conveniences

    def handshake(self, experimental=True):
        self.send({"id": 1, "method": "initialize",
                   "params": {"clientInfo": CLIENT_INFO, "capabilities": {"experimentalApi": experimental}}})
        self.wait_for(lambda m: m.get("id") == 1)
        self.send({"method": "initialized"})

    def start_thread(self, rid=2, **overrides):
        params = {"cwd": self.repo, "model": MODEL, "approvalPolicy": "untrusted", "sandbox": "workspace-write"}
        params.update(overrides)
        reply = self.request(rid, "thread/start", params)
        thread_id = reply["result"]["thread"]["id"]
        self.wait_for(lambda m: m.get("method") == "thread/started")
        return thread_id

    def start_turn(self, rid, thread_id, text, **extra):
        params = {"threadId": thread_id, "input": [{"type": "text", "text": text}]}
        params.update(extra)
        reply = self.request(rid, "turn/start", params)
        return reply["result"]["turn"]["id"]

    def run_turn(self, answers=(), timeout=TURN_TIMEOUT):
        """Answers the server's requests in order with `answers` (result objects), until turn/completed.

        Requests that arrive together (parallel tool calls) are collected first, then answered in
        the order they came, each once Codex is quiet.
        """
        pending = list(answers)
        end = time.monotonic() + timeout
        while True:
            msg = self.wait_for(lambda m: m.get("method") == "turn/completed" or ("method" in m and "id" in m),
                                max(0.1, end - time.monotonic()))
            if msg.get("method") == "turn/completed":
                break
            batch = [msg]
            self.quiet()
            while True:
                try:
                    more = self.queue.get_nowait()
                except queue.Empty:
                    break
                if more is not None and "method" in more and "id" in more:
                    batch.append(more)
                elif more is not None and more.get("method") == "turn/completed":
                    raise AssertionError("turn completed while requests were pending")
            for req in batch:
                if not pending:
                    raise AssertionError("unexpected server request %s" % req.get("method"))
                self.send({"id": req["id"], "result": pending.pop(0)})
        if pending:
            raise AssertionError("%d scripted answers were not used" % len(pending))
        return msg

    def close(self, timeout=10):
        """Closes stdin (EOF) and waits for the process to exit."""
        self.quiet()
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            code = self.proc.wait()
        for r in self.readers:
            r.join(5)
        return code

    def kill(self):
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
            self.proc.wait()


def decision(d):
    return {"decision": d}


_VERSION = {}


def cli_version(codex):
    if codex not in _VERSION:
        out = subprocess.run([codex, "--version"], capture_output=True, text=True).stdout.strip()
        _VERSION[codex] = out.split()[-1] if out else "unknown"
    return _VERSION[codex]


# ---------------------------------------------------------------------------------------------
# Scenarios: each takes a started CodexProcess (handshake not yet done) and plays the host.


def prompt(name, extra=""):
    return ("%s [[scenario:%s]]" % (extra, name)).strip()


def sc_plain(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("plain", "Say hello."))
    cx.run_turn()


def sc_tool_allow(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("tool-allow", "Create hello.txt."))
    cx.run_turn([decision("accept")])


def sc_deny_continue(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("deny-continue", "Clean the build."))
    cx.run_turn([decision("decline")])


def sc_cancel(cx):
    # Same model script as deny-continue, answered with "cancel": the turn ends interrupted.
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("deny-continue", "Clean the build."))
    cx.run_turn([decision("cancel")])


def sc_session_accept(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("session-accept", "Append to the log."))
    # One approval only: the second identical command runs without asking.
    cx.run_turn([decision("acceptForSession")])
    # A later turn: the same command again (no approval), then `echo two` (asks again).
    cx.start_turn(4, tid, "Once more. [[followup]]")
    cx.run_turn([decision("accept")])


def sc_file_change(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("file-change", "Add notes.txt."))
    cx.run_turn([decision("accept")])


def sc_file_decline(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("file-change", "Add notes.txt."))
    cx.run_turn([decision("decline")])


def sc_file_session(cx):
    # acceptForSession on a patch: a later patch to the same file is applied without asking.
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("file-change", "Add notes.txt."))
    cx.run_turn([decision("acceptForSession")])
    cx.start_turn(4, tid, "Update it. [[followup]]")
    cx.run_turn()


def sc_interrupt(cx):
    cx.handshake()
    tid = cx.start_thread()
    turn_id = cx.start_turn(3, tid, prompt("interrupt", "Wait a while."))
    approval = cx.wait_for(lambda m: m.get("method") == "item/commandExecution/requestApproval")
    cx.send({"id": approval["id"], "result": decision("accept")})
    cx.quiet(0.5)
    cx.send({"id": 4, "method": "turn/interrupt", "params": {"threadId": tid, "turnId": turn_id}})
    cx.wait_for(lambda m: m.get("method") == "turn/completed")
    # A second interrupt of the finished turn gets no reply at all (a host needs a timeout).
    cx.send({"id": 5, "method": "turn/interrupt", "params": {"threadId": tid, "turnId": turn_id}})
    try:
        cx.wait_for(lambda m: m.get("id") == 5, timeout=1.5)
    except TimeoutError:
        pass


def sc_followup(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("followup", "First."))
    cx.run_turn()
    cx.start_turn(4, tid, "Second. [[followup]]")
    cx.run_turn()


def sc_api_error(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("api-error", "Fail please."))
    cx.run_turn()
    # The thread is left in status systemError; the next turn works.
    cx.start_turn(4, tid, "Try again. [[followup]]")
    cx.run_turn()


def sc_stream_error(cx):
    # Recorded with stream_max_retries=1: one `error` with willRetry:true, then the failure.
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("stream-error", "Fail mid-stream."))
    cx.run_turn()


def sc_server_error(cx):
    # HTTP 500 with request_max_retries=0 and stream_max_retries=0: one request, then the failure
    # (with the defaults Codex makes 30 requests over ~25 s, reporting "Reconnecting... n/5").
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("server-error", "Fail on the server."))
    cx.run_turn()


def sc_two_tools(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("two-tools", "Write a and b."))
    cx.run_turn([decision("accept"), decision("accept")])


def sc_reasoning(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("reasoning", "Think first."))
    cx.run_turn()


PLAN_MODE = {"mode": "plan", "settings": {"model": MODEL, "reasoning_effort": None, "developer_instructions": None}}


def sc_question(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("question", "Plan the tests."), collaborationMode=PLAN_MODE)
    cx.run_turn([{"answers": {"db_choice": {"answers": ["Postgres"]}}}])


def sc_exec_fail(cx):
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("exec-fail", "List a missing directory."))
    cx.run_turn([decision("accept")])


def sc_output_stream(cx):
    # approvalPolicy "never": the command runs at once, inside the sandbox, printing over ~1 s.
    cx.handshake()
    tid = cx.start_thread(approvalPolicy="never")
    cx.start_turn(3, tid, prompt("output-stream", "Print three lines."))
    cx.run_turn()


def sc_sandbox_denied(cx):
    # approvalPolicy "on-request": runs sandboxed without asking; the write outside the workspace
    # fails with EROFS inside the sandbox and Codex emits no commandExecution item at all.
    cx.handshake()
    tid = cx.start_thread(approvalPolicy="on-request")
    cx.start_turn(3, tid, prompt("sandbox-denied", "Write outside the workspace."))
    cx.run_turn()


def sc_sandbox_denied_fast(cx):
    # As sandbox-denied, but the write fails at once: Codex then emits no commandExecution item.
    cx.handshake()
    tid = cx.start_thread(approvalPolicy="on-request")
    cx.start_turn(3, tid, prompt("sandbox-denied-fast", "Write outside the workspace."))
    cx.run_turn()


def sc_protocol_errors(cx):
    # Requests before initialize, unknown methods, garbage lines, an answer to an unknown id.
    cx.send({"id": "early", "method": "thread/start", "params": {"cwd": cx.repo}}, settle=False)
    cx.wait_for(lambda m: m.get("id") == "early")
    cx.handshake(experimental=False)  # so that collaborationMode below is refused
    cx.send({"id": "unknown", "method": "no/such/method", "params": {}})
    cx.wait_for(lambda m: m.get("id") == "unknown")
    cx.send_raw("this is not json")
    cx.send({"id": 77, "result": {"decision": "accept"}})
    cx.send({"id": "badthread", "method": "turn/start", "params": {"threadId": "nope", "input": []}})
    cx.wait_for(lambda m: m.get("id") == "badthread")
    tid = cx.start_thread()
    cx.send({"id": "plan", "method": "turn/start", "params": {
        "threadId": tid, "input": [{"type": "text", "text": "x"}], "collaborationMode": PLAN_MODE}})
    cx.wait_for(lambda m: m.get("id") == "plan")


def sc_resume(cx, prior_thread):
    cx.handshake()
    # excludeTurns: without it the reply carries the whole history and Codex sends a deprecationNotice.
    reply = cx.request(2, "thread/resume", {"threadId": prior_thread, "cwd": cx.repo, "approvalPolicy": "untrusted",
                                            "sandbox": "workspace-write", "excludeTurns": True})
    tid = reply["result"]["thread"]["id"]
    cx.start_turn(3, tid, "After the restart. [[followup]]")
    cx.run_turn()


def setup_resume(cx):
    """Runs (unrecorded) the first process of the resume scenario; returns its thread id."""
    cx.handshake()
    tid = cx.start_thread()
    cx.start_turn(3, tid, prompt("followup", "First."))
    cx.run_turn()
    return tid


def _messages(lines):
    """(dir, parsed message) of a normalized fixture's JSON lines."""
    out = []
    for l in lines[1:]:
        r = json.loads(l)
        if r["dir"] != "err":
            out.append((r["dir"], json.loads(r["line"])))
    return out


def _index(msgs, pred):
    return next((i for i, (d, m) in enumerate(msgs) if pred(m)), -1)


def canonical_declined(lines):
    # After a decline / cancel, item/completed (declined) races with thread/status/changed.
    msgs = _messages(lines)
    done = _index(msgs, lambda m: m.get("method") == "item/completed" and m["params"]["item"]["type"] == "commandExecution")
    resolved = _index(msgs, lambda m: m.get("method") == "serverRequest/resolved")
    return done == resolved + 1


def canonical_no_output_delta(lines):
    # A command that ends at once may or may not have its output streamed as outputDelta.
    return not any(m.get("method") == "item/commandExecution/outputDelta" for d, m in _messages(lines))


def canonical_no_command_item(lines):
    # The failing command usually (not always) gets no item/started / item/completed at all.
    return not any(m.get("method") in ("item/started", "item/completed") and m["params"]["item"]["type"] == "commandExecution"
                   for d, m in _messages(lines))


def canonical_two_tools(lines):
    # Codex starts the two parallel calls in either order; keep the recording where call _0 asks first.
    reqs = [m for d, m in _messages(lines) if m.get("method") == "item/commandExecution/requestApproval"]
    return len(reqs) == 2 and reqs[0]["params"]["itemId"].endswith("_0")


def canonical_question(lines):
    # thread/settings/updated (collaboration mode changed) races with the turn/start response.
    order = [m.get("method") or "response:%s" % m.get("id") for d, m in _messages(lines) if d == "out"]
    return order.index("thread/settings/updated") < order.index("response:3")


# name -> (function, extra -c config[, canonical(lines) -> bool])
# A scenario with a canonical predicate is re-recorded (a few times at most) until the predicate
# holds, for races inside Codex that no host-side waiting can settle.
SCENARIOS = {
    "plain": (sc_plain, ()),
    "tool-allow": (sc_tool_allow, ()),
    "deny-continue": (sc_deny_continue, (), canonical_declined),
    "cancel": (sc_cancel, (), canonical_declined),
    "session-accept": (sc_session_accept, ()),
    "file-change": (sc_file_change, ()),
    "file-decline": (sc_file_decline, ()),
    "file-session": (sc_file_session, ()),
    "interrupt": (sc_interrupt, ()),
    "followup": (sc_followup, ()),
    "api-error": (sc_api_error, ()),
    "stream-error": (sc_stream_error, ("model_providers.mock.stream_max_retries=1",)),
    "server-error": (sc_server_error, ("model_providers.mock.request_max_retries=0",
                                       "model_providers.mock.stream_max_retries=0")),
    "two-tools": (sc_two_tools, (), canonical_two_tools),
    "reasoning": (sc_reasoning, ()),
    "question": (sc_question, (), canonical_question),
    "exec-fail": (sc_exec_fail, (), canonical_no_output_delta),
    "output-stream": (sc_output_stream, ()),
    "sandbox-denied": (sc_sandbox_denied, ()),
    "sandbox-denied-fast": (sc_sandbox_denied_fast, (), canonical_no_command_item),
    "protocol-errors": (sc_protocol_errors, ()),
    "resume": (sc_resume, ()),
}


# ---------------------------------------------------------------------------------------------
# Normalization

UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
ISO_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")
ROLLOUT_RE = re.compile(r"sessions/\d{4}/\d\d/\d\d/rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d")
BASE_S = 1767225600            # 2026-01-01T00:00:00Z
# JSON members whose values are volatile. Matching is on the raw line text, so that everything
# else in a line stays byte for byte what Codex wrote.
MS_RE = re.compile(r'"(emittedAtMs|startedAtMs|completedAtMs|updatedAtMs|createdAtMs|timestampMs)":\d+')
S_RE = re.compile(r'"(createdAt|updatedAt|recencyAt|startedAt|completedAt|sectionEnteredAt)":\d+')
DURATION_RE = re.compile(r'"(durationMs)":\d+')
PID_RE = re.compile(r'"(processId|pid)":"?(\d+)"?')


# stderr lines whose presence depends on timing (not on the scenario): dropped from fixtures.
RACY_ERR = (
    # after an interrupt, a still-running command's end races with the shutdown at stdin EOF
    "failed to record rollout items",
)


def _racy_err(record):
    return record["dir"] == "err" and any(s in record["line"] for s in RACY_ERR)


def canonical_order(records):
    """Stdout and stderr are two pipes with no order between them, so err lines get canonical places:
    those that came before Codex's first stdout line go first (startup noise, however late it was
    relative to the host's first message); later ones go at the end of their stretch between two
    host messages, after its out lines. Each direction keeps its own order."""
    first_out = next((i for i, r in enumerate(records) if r["dir"] == "out"), len(records))
    startup = [r for r in records[:first_out] if r["dir"] == "err"]
    rest = [r for r in records[:first_out] if r["dir"] != "err"] + records[first_out:]
    out, stretch_out, stretch_err = list(startup), [], []
    for r in rest:
        if r["dir"] == "in":
            out += stretch_out + stretch_err + [r]
            stretch_out, stretch_err = [], []
        elif r["dir"] == "out":
            stretch_out.append(r)
        else:
            stretch_err.append(r)
    return out + stretch_out + stretch_err


class Normalizer:
    """Rewrites volatile values consistently (same input value -> same placeholder)."""

    def __init__(self, root, port):
        self.root = root
        self.port = port
        self.host = socket.gethostname()
        self.uuids = {}
        self.pids = {}

    def _uuid(self, m):
        key = m.group(0).lower()
        if key not in self.uuids:
            self.uuids[key] = "00000000-0000-7000-8000-%012d" % (len(self.uuids) + 1)
        return self.uuids[key]

    def _pid(self, m):
        key = m.group(2)
        if key not in self.pids:
            self.pids[key] = str(1000 + len(self.pids) + 1)
        quoted = m.group(0).endswith('"')
        return '"%s":%s' % (m.group(1), ('"%s"' if quoted else "%s") % self.pids[key])

    def line(self, s, index):
        s = s.replace(self.root, FIXTURE_ROOT)
        s = s.replace("127.0.0.1:%d" % self.port, "127.0.0.1:PORT")
        s = s.replace('"serverName":"%s"' % self.host, '"serverName":"host"')
        s = UUID_RE.sub(self._uuid, s)
        s = ROLLOUT_RE.sub("sessions/2026/01/01/rollout-2026-01-01T00-00-00", s)
        s = ISO_RE.sub("2026-01-01T00:00:00.000000Z", s)
        s = MS_RE.sub(lambda m: '"%s":%d' % (m.group(1), BASE_S * 1000 + index * 10), s)
        s = S_RE.sub(lambda m: '"%s":%d' % (m.group(1), BASE_S), s)
        s = DURATION_RE.sub(lambda m: '"%s":0' % m.group(1), s)
        s = PID_RE.sub(self._pid, s)
        return s

    def __call__(self, header, records):
        header = dict(header)
        header["argv"] = [self.line(a, 0) for a in header["argv"]]
        header["argv"][0] = "codex"
        records = canonical_order([r for r in records if not _racy_err(r)])
        out = []
        for i, r in enumerate(records):
            line = self.line(r["line"], i)
            if r["line"].startswith("{"):
                json.loads(line)  # normalization must keep JSON lines valid
            out.append({"t": round(i * 0.01, 2), "dir": r["dir"], "line": line})
        return header, out


# ---------------------------------------------------------------------------------------------
# Driver


def make_root():
    root = tempfile.mkdtemp(prefix="nucleic-rec-")
    for sub in ("repo", "codex-home", "home"):
        os.makedirs(os.path.join(root, sub))
    repo = os.path.join(root, "repo")
    env = dict(os.environ, GIT_AUTHOR_NAME="Nucleic", GIT_AUTHOR_EMAIL="fixture@nucleic.invalid",
               GIT_COMMITTER_NAME="Nucleic", GIT_COMMITTER_EMAIL="fixture@nucleic.invalid",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
               HOME=os.path.join(root, "home"))
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True, env=env)
    with open(os.path.join(repo, "README.md"), "w") as f:
        f.write("# fixture repository\n")
    subprocess.run(["git", "-C", repo, "add", "README.md"], check=True, env=env)
    subprocess.run(["git", "-C", repo, "commit", "-q", "-m", "Initial commit"], check=True, env=env)
    return root


ATTEMPTS = 12


def record(name, codex, mock, verbose=False, keep=False):
    """Records one scenario (until its canonical predicate holds); returns (fixture lines, seconds)."""
    entry = SCENARIOS[name]
    canonical = entry[2] if len(entry) > 2 else None
    started = time.monotonic()
    for attempt in range(ATTEMPTS if canonical else 1):
        lines, _ = record_once(name, codex, mock, verbose, keep)
        if canonical is None or canonical(lines):
            return lines, time.monotonic() - started
        if verbose:
            sys.stderr.write("%s: not the canonical interleaving, recording again\n" % name)
    raise RuntimeError("no canonical recording of %s in %d attempts" % (name, ATTEMPTS))


def record_once(name, codex, mock, verbose=False, keep=False):
    """Records one scenario once; returns (fixture lines, seconds)."""
    func, extra = SCENARIOS[name][:2]
    root = make_root()
    started = time.monotonic()
    try:
        prior = None
        if name == "resume":
            first = CodexProcess(codex, mock.port, root, name, extra, verbose=verbose)
            try:
                prior = setup_resume(first)
                first.close()
            finally:
                first.kill()
        cx = CodexProcess(codex, mock.port, root, name, extra, verbose=verbose)
        try:
            if prior is not None:
                func(cx, prior)
            else:
                func(cx)
            cx.close()
        finally:
            cx.kill()
        if os.path.exists(SANDBOX_PROBE):
            # The sandbox let a write outside the workspace through: clean up, and say so.
            os.remove(SANDBOX_PROBE)
            sys.stderr.write("%s: warning: %s was written (sandbox not effective?)\n" % (name, SANDBOX_PROBE))
        norm = Normalizer(root, mock.port)
        return cx.writer.lines(norm), time.monotonic() - started
    finally:
        if keep:
            sys.stderr.write("kept %s\n" % root)
        else:
            shutil.rmtree(root, ignore_errors=True)


def find_codex(arg):
    for c in (arg, os.environ.get("NUCLEIC_CODEX_BIN"), shutil.which("codex")):
        if c and os.path.exists(c):
            return c
    sys.exit("record_codex: no codex binary (run: eval \"$(scripts/peers.sh)\")")


def main():
    ap = argparse.ArgumentParser(description="Record Codex app-server fixtures against the mock model API.")
    ap.add_argument("--scenario", action="append", default=[], choices=sorted(SCENARIOS))
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "Fixtures", "codex"))
    ap.add_argument("--codex", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--check", type=int, default=0, metavar="N",
                    help="record each scenario N more times and report lines that differ")
    ap.add_argument("--mock-log", default=None)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    names = list(SCENARIOS) if args.all else args.scenario
    if not names:
        ap.error("give --scenario NAME or --all")
    codex = find_codex(args.codex)
    os.makedirs(args.out, exist_ok=True)
    mock = Mock(args.mock_log)
    failed = []
    total = time.monotonic()
    try:
        for name in names:
            try:
                lines, secs = record(name, codex, mock, args.verbose, args.keep)
            except Exception as e:  # noqa: BLE001 - report and continue with the other scenarios
                failed.append(name)
                print("%-20s FAILED: %s: %s" % (name, type(e).__name__, e))
                continue
            path = os.path.join(args.out, name + ".jsonl")
            with open(path, "w", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
            print("%-20s %3d lines  %5.1fs  %s" % (name, len(lines) - 1, secs, os.path.relpath(path)))
            for n in range(args.check):
                again, _ = record(name, codex, mock, False, False)
                if again != lines:
                    failed.append(name + "(unstable)")
                    print("%-20s UNSTABLE on re-record %d:" % (name, n + 1))
                    for a, b in zip(lines, again):
                        if a != b:
                            print("   - " + a[:400])
                            print("   + " + b[:400])
                            break
                    if len(lines) != len(again):
                        print("   (%d vs %d lines)" % (len(lines), len(again)))
    finally:
        mock.close()
    print("total %.1fs" % (time.monotonic() - total))
    if failed:
        print("failed: " + ", ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
