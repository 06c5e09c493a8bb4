#!/usr/bin/env python3
"""Records fixtures of the real Claude Code CLI, driven against mock_anthropic.py.

Usage: record_claude.py [--scenario NAME ... | --all] [--out Fixtures/claude] [--print] [--keep]

For each scenario: starts a scratch git repo and a private HOME, runs
  claude -p --input-format stream-json --output-format stream-json --verbose
         --permission-prompt-tool stdio [--include-partial-messages]
against one shared mock (the mock is stateless), plays the host's side (initialize, the prompt,
answers to can_use_tool, interrupts, follow-ups), captures every line in both directions and
stderr with fixturelib.FixtureWriter, and writes <out>/<scenario>.jsonl with volatile values
normalized (see normalize()), so re-recording with an unchanged CLI gives no diff.

Lines are recorded in the order the host handles them: an agent line, then whatever the host
sent in reaction to it. `t` is the record's index x 0.01 (real times are not stable).

The CLI is $NUCLEIC_CLAUDE_BIN (see scripts/peers.sh), else `claude` on PATH.
--print   echoes the lines live (for exploring); --keep keeps the scratch directories.
"""
import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fixturelib  # noqa: E402

MOCK = os.path.join(HERE, "mock_anthropic.py")
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURE_ROOT = "/tmp/nucleic-fixture"
SCENARIO_TIMEOUT = 45.0  # generous: on a busy machine a scenario takes 4× its idle time

BASE_ARGV = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
             "--permission-prompt-tool", "stdio"]


def base_env(home, port):
    """The environment the CLI runs with: nothing inherited but PATH, offline, quiet."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "LANG": "C.UTF-8",
        "TZ": "UTC",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
        "ANTHROPIC_API_KEY": "test",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    }


# ---------------------------------------------------------------------------------------------
# Host messages


def initialize(rid="req_1_initialize"):
    return {"type": "control_request", "request_id": rid, "request": {"subtype": "initialize"}}


def user(text):
    return {"type": "user", "message": {"role": "user", "content": text}}


def interrupt(rid):
    return {"type": "control_request", "request_id": rid, "request": {"subtype": "interrupt"}}


def respond(request_id, response):
    return {"type": "control_response",
            "response": {"subtype": "success", "request_id": request_id, "response": response}}


def allow(msg, updated_input=None):
    req = msg["request"]
    return respond(msg["request_id"], {"behavior": "allow",
                                       "updatedInput": req["input"] if updated_input is None else updated_input})


def deny(msg, message):
    return respond(msg["request_id"], {"behavior": "deny", "message": message})


def is_permission(msg):
    return msg.get("type") == "control_request" and (msg.get("request") or {}).get("subtype") == "can_use_tool"


def is_result(msg):
    return msg.get("type") == "result"


# ---------------------------------------------------------------------------------------------
# Scenarios: a prompt, flags, and the host's reaction to each agent message.
# A host function gets (run, msg) for every parsed agent line and calls run.send / run.finish.


DENIAL = "Denied by the host: keep the build directory."


def host_allow_all(run, msg):
    if is_permission(msg):
        run.send(allow(msg))
    elif is_result(msg):
        run.finish()


def host_deny(run, msg):
    if is_permission(msg):
        run.send(deny(msg, DENIAL))
    elif is_result(msg):
        run.finish()


def host_modify(run, msg):
    if is_permission(msg):
        inp = dict(msg["request"]["input"])
        inp["command"] = "echo modified > modified.txt"
        run.send(allow(msg, inp))
    elif is_result(msg):
        run.finish()


def host_ask(run, msg):
    if is_permission(msg):
        inp = dict(msg["request"]["input"])
        if msg["request"]["tool_name"] == "AskUserQuestion":
            inp["answers"] = {q["question"]: q["options"][1]["label"] for q in inp["questions"]}
        run.send(allow(msg, inp))
    elif is_result(msg):
        run.finish()


def host_interrupt(run, msg):
    # Allow the command, then interrupt once the CLI reports it running (system/task_started).
    if is_permission(msg):
        run.send(allow(msg))
    elif msg.get("type") == "system" and msg.get("subtype") == "task_started":
        run.send(interrupt("req_2_interrupt"))
    elif is_result(msg):
        run.finish()


def host_interrupt_pending(run, msg):
    # Leave the permission request unanswered and interrupt; the CLI cancels its request
    # (control_cancel_request). Then answer the cancelled request anyway (an unknown id by now),
    # and send a follow-up to show the session still works.
    # The interrupt waits a second, until the assistant message has finished streaming (the mock
    # pauses after a tool_use block); an interrupt during the stream ends the turn differently.
    st = run.state
    if is_permission(msg) and "pending" not in st:
        st["pending"] = msg
        run.later(1.0, lambda: run.send(interrupt("req_2_interrupt")))
    elif msg.get("type") == "control_cancel_request":
        st["cancelled"] = True
    elif is_result(msg) and "late" not in st:
        st["late"] = True
        run.send(allow(st["pending"]))
        run.send(respond("req_unknown_0", {"behavior": "allow", "updatedInput": {}}))
        run.send(user("[[followup]] Are you still there?"))
    elif is_result(msg):
        run.finish()


def host_followup(run, msg):
    if is_permission(msg):
        run.send(allow(msg))
    elif is_result(msg):
        run.state["results"] = run.state.get("results", 0) + 1
        if run.state["results"] == 1:
            run.send(user("[[followup]] Now the second part, please."))
        else:
            run.finish()


def host_eof_pending(run, msg):
    # Close stdin while a permission request is pending (after the stream ended); see what the
    # CLI does.
    if is_permission(msg):
        run.later(1.0, run.finish)


def host_eof_midturn(run, msg):
    # Close stdin as soon as the prompt is being worked on (right after system/init).
    if msg.get("type") == "system" and msg.get("subtype") == "init":
        run.finish()


def host_deny_interrupt(run, msg):
    # deny with interrupt: true is how a host denies and ends the turn (Decision "cancel").
    if is_permission(msg):
        run.send(respond(msg["request_id"], {"behavior": "deny", "message": DENIAL, "interrupt": True}))
    elif is_result(msg):
        run.finish()


def host_permission_error(run, msg):
    # The host fails to decide: a control_response with subtype "error".
    if is_permission(msg):
        run.send({"type": "control_response",
                  "response": {"subtype": "error", "request_id": msg["request_id"], "error": "host failed to decide"}})
    elif is_result(msg):
        run.finish()


def host_allow_always(run, msg):
    # Allow with updatedPermissions = the suggested addRules, destination "session"; the same
    # command in the follow-up turn then runs without a can_use_tool.
    if is_permission(msg):
        rules = [dict(s, destination="session") for s in msg["request"].get("permission_suggestions") or []
                 if s.get("type") == "addRules"]
        run.send(respond(msg["request_id"], {"behavior": "allow", "updatedInput": msg["request"]["input"],
                                             "updatedPermissions": rules}))
    elif is_result(msg):
        host_followup(run, msg)


def host_ask_multi(run, msg):
    # Two questions; the multiSelect one is answered with labels joined by ", ".
    if is_permission(msg):
        inp = dict(msg["request"]["input"])
        qs = inp["questions"]
        inp["answers"] = {qs[0]["question"]: ", ".join([qs[0]["options"][0]["label"], qs[0]["options"][2]["label"]]),
                          qs[1]["question"]: qs[1]["options"][1]["label"]}
        run.send(allow(msg, inp))
    elif is_result(msg):
        run.finish()


def host_queued_prompt(run, msg):
    # A prompt sent while the turn waits for a decision; the CLI folds it into the running turn.
    st = run.state
    if is_permission(msg) and "queued" not in st:
        st["queued"] = True
        run.send(user("[[followup]] Also, while you are at it: hello."))
        run.later(1.0, lambda: run.send(allow(msg)))
    elif is_permission(msg):
        run.send(allow(msg))
    elif is_result(msg):
        run.later(1.0, run.finish)


def host_bad_line(run, msg):
    # A line that is not JSON, sent after the first result.
    if is_result(msg):
        run.send_raw("this is not json")
        run.later(2.0, run.finish)


def host_interrupt_streaming(run, msg):
    # Interrupt after the first text delta of a slowly streamed answer, then follow up.
    st = run.state
    if (msg.get("type") == "stream_event" and (msg.get("event") or {}).get("type") == "content_block_delta"
            and "interrupted" not in st):
        st["interrupted"] = True
        run.send(interrupt("req_2_interrupt"))
    elif is_result(msg) and "followup" not in st:
        st["followup"] = True
        run.send(user("[[followup]] Go on."))
    elif is_result(msg):
        run.finish()


def setup_resume(run):
    """Runs a first, unrecorded turn in the same repo and HOME; the recorded run resumes it."""
    first = Run(Scenario("followup", "Do the first part.", host_allow_all), run.port, run.cli)
    shutil.rmtree(first.root, ignore_errors=True)
    first.root, first.home, first.repo = run.root, run.home, run.repo
    first.run()
    sid = None
    for r in first.writer.records:
        try:
            msg = json.loads(r["line"])
        except ValueError:
            continue
        if isinstance(msg, dict) and msg.get("type") == "system" and msg.get("subtype") == "init":
            sid = msg["session_id"]
    if not sid:
        raise RuntimeError("resume: the first run reported no session id")
    return ["--resume", sid]


class Scenario:
    def __init__(self, name, prompt, host, partial=False, env=None, about="", setup=None, raw_prompt=False):
        self.name, self.prompt, self.host, self.partial = name, prompt, host, partial
        self.env = env or {}
        self.about = about
        self.setup = setup  # setup(run) -> extra argv, before the recorded process starts
        self.raw_prompt = raw_prompt  # the prompt is sent as is, without a scenario token


SCENARIOS = [
    Scenario("plain", "Say hello.", host_allow_all, about="text answer, no tools"),
    Scenario("tool-allow", "Create hello.txt containing hello.", host_allow_all,
             about="Bash tool_use, host allows unchanged"),
    Scenario("deny-continue", "Clean the build directory.", host_deny,
             about="Bash tool_use, host denies with a message, agent continues"),
    Scenario("modify", "Write modified.txt.", host_modify,
             about="Bash tool_use, host allows with updatedInput"),
    Scenario("ask", "Make a button.", host_ask,
             about="AskUserQuestion, host answers by allowing with updatedInput.answers"),
    Scenario("two-tools", "Create one.txt and two.txt.", host_allow_all,
             about="one assistant message with two Bash tool_use blocks"),
    Scenario("interrupt", "Wait a while.", host_interrupt,
             about="Bash tool_use allowed, host interrupts while it runs"),
    Scenario("interrupt-pending", "Clean the build directory.", host_interrupt_pending,
             about="host interrupts while can_use_tool is unanswered, answers late, follows up"),
    Scenario("followup", "Do the first part.", host_followup,
             about="two turns in one process"),
    Scenario("followup-tool", "Do the first part.", host_followup,
             about="two turns in one process; the second asks for a Bash command"),
    Scenario("api-error", "Say hello.", host_allow_all,
             about="HTTP 500 api_error with x-should-retry: false"),
    Scenario("overloaded", "Say hello.", host_allow_all,
             about="HTTP 529 overloaded_error with x-should-retry: false"),
    Scenario("overloaded-retry", "Say hello.", host_allow_all, env={"CLAUDE_CODE_MAX_RETRIES": "1"},
             about="HTTP 529 without x-should-retry, CLAUDE_CODE_MAX_RETRIES=1: system/api_retry"),
    Scenario("invalid-request", "Say hello.", host_allow_all,
             about="HTTP 400 invalid_request_error"),
    Scenario("partial", "Think, then answer.", host_allow_all, partial=True,
             about="--include-partial-messages: thinking + text in small deltas"),
    Scenario("partial-tool", "Create hello.txt containing hello.", host_allow_all, partial=True,
             about="--include-partial-messages with a tool_use (input_json_delta)"),
    Scenario("edit", "Write notes.txt.", host_allow_all,
             about="Write tool (file edit permission request)"),
    Scenario("blocked-sleep", "Wait a while.", host_allow_all,
             about="a standalone sleep is refused by the CLI itself, no can_use_tool"),
    Scenario("readonly-auto", "Say something in the shell.", host_allow_all,
             about="a read-only Bash command runs without asking the host"),
    Scenario("eof-pending", "Create hello.txt containing hello.", host_eof_pending,
             about="host closes stdin while can_use_tool is pending"),
    Scenario("eof-midturn", "Say hello.", host_eof_midturn,
             about="host closes stdin right after system/init, before the answer"),
    Scenario("deny-interrupt", "Clean the build directory.", host_deny_interrupt,
             about="deny with interrupt: true ends the turn (error_during_execution)"),
    Scenario("permission-error", "Create hello.txt containing hello.", host_permission_error,
             about="the host answers can_use_tool with a control_response subtype error"),
    Scenario("allow-always", "Touch again.txt.", host_allow_always,
             about="allow with updatedPermissions (session rule); the follow-up runs it unasked"),
    Scenario("ask-multi", "Make buttons.", host_ask_multi,
             about="AskUserQuestion with two questions, one multiSelect"),
    Scenario("queued-prompt", "Create hello.txt containing hello.", host_queued_prompt,
             about="a user message sent while can_use_tool is pending joins the running turn"),
    Scenario("state-events", "Create hello.txt containing hello.", host_allow_all,
             env={"CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS": "1"},
             about="CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS=1: system/session_state_changed"),
    Scenario("bad-line", "Say hello.", host_bad_line,
             about="a non-JSON line from the host: the CLI prints an error on stderr and exits 1"),
    Scenario("interrupt-streaming", "Tell me something.", host_interrupt_streaming, partial=True,
             about="interrupt while the answer is still streaming, then a follow-up"),
    Scenario("resume", "[[followup]] Continue where we left off.", host_allow_all, setup=setup_resume,
             raw_prompt=True, about="--resume <session id> of a finished first turn, in a new process"),
]
BY_NAME = {s.name: s for s in SCENARIOS}
# Scenarios whose mock script is borrowed from another one.
MOCK_SCENARIO = {"partial-tool": "tool-allow", "deny-interrupt": "deny-continue",
                 "permission-error": "tool-allow", "queued-prompt": "tool-allow", "state-events": "tool-allow",
                 "bad-line": "plain", "interrupt-streaming": "slow",
                 "eof-pending": "tool-allow", "eof-midturn": "plain"}


# ---------------------------------------------------------------------------------------------
# Running one scenario


class Run:
    def __init__(self, scenario, port, cli, echo=False, keep=False):
        self.scenario = scenario
        self.port = port
        self.cli = cli
        self.echo = echo
        self.keep = keep
        self.state = {}
        self.timers = []
        self.finished = False
        self.root = tempfile.mkdtemp(prefix="nucleic-rec-")
        self.home = os.path.join(self.root, "home")
        self.repo = os.path.join(self.root, "repo")
        os.makedirs(self.home)
        os.makedirs(self.repo)
        git_env = dict(os.environ, HOME=self.home, GIT_CONFIG_NOSYSTEM="1")
        subprocess.run(["git", "init", "-q", "-b", "main", self.repo], check=True, env=git_env)
        argv = BASE_ARGV + (["--include-partial-messages"] if scenario.partial else [])
        self.argv = [cli] + argv
        self.writer = fixturelib.FixtureWriter("claude", cli_version(cli), ["claude"] + argv, scenario.name)
        self.q = queue.Queue()
        self.t0 = time.monotonic()

    def log(self, direction, line):
        self.writer.add(direction, line)
        if self.echo:
            arrow = {"in": ">>", "out": "<<", "err": "!!"}[direction]
            sys.stderr.write("%6.2f %s %s\n" % (time.monotonic() - self.t0, arrow, line[:400]))

    def send(self, obj):
        line = json.dumps(obj, separators=(",", ":"))
        self.log("in", line)
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def send_raw(self, line):
        self.log("in", line)
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def later(self, delay, action):
        """Run `action()` from the main loop after `delay` seconds."""
        self.timers.append((time.monotonic() + delay, action))
        self.timers.sort(key=lambda t: t[0])

    def finish(self):
        """The host is done: close stdin (the CLI then exits) and read what is left."""
        self.finished = True
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError):
            pass

    def reader(self, stream, direction):
        for line in stream:
            self.q.put((direction, line.rstrip("\n")))
        self.q.put((direction, None))

    def run(self):
        if self.scenario.setup:
            extra = self.scenario.setup(self)
            self.argv += extra
            self.writer.header["argv"] += extra
            self.t0 = time.monotonic()
        env = base_env(self.home, self.port)
        env.update(self.scenario.env)
        self.proc = subprocess.Popen(self.argv, cwd=self.repo, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     encoding="utf-8", bufsize=1)
        threading.Thread(target=self.reader, args=(self.proc.stdout, "out"), daemon=True).start()
        threading.Thread(target=self.reader, args=(self.proc.stderr, "err"), daemon=True).start()
        self.send(initialize())
        if self.scenario.raw_prompt:
            self.send(user(self.scenario.prompt))
        else:
            self.send(user("[[scenario:%s]] %s" % (MOCK_SCENARIO.get(self.scenario.name, self.scenario.name),
                                                   self.scenario.prompt)))
        deadline = self.t0 + SCENARIO_TIMEOUT
        open_streams = 2
        ok = True
        while open_streams:
            now = time.monotonic()
            if now >= deadline:
                ok = False
                break
            if self.timers and self.timers[0][0] <= now:
                self.timers.pop(0)[1]()
                continue
            wake = min([deadline] + [t for t, _ in self.timers[:1]])
            try:
                direction, line = self.q.get(timeout=max(0.005, wake - now))
            except queue.Empty:
                continue
            if line is None:
                open_streams -= 1
                continue
            self.log(direction, line)
            if direction != "out":
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if not self.finished and isinstance(msg, dict):
                self.scenario.host(self, msg)
        if not ok:
            self.proc.kill()
        self.exit_code = self.proc.wait(timeout=10)
        return ok

    def cleanup(self):
        if not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)


def cli_version(cli):
    try:
        out = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=30).stdout
        return out.split()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "unknown"


# ---------------------------------------------------------------------------------------------
# Normalization


UUID_RE = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
TS_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b")
# Durations and latencies: any numeric field whose name ends in _ms / Ms, and elapsed seconds.
DURATION_RE = re.compile(r'(\\?"(?:[A-Za-z_]*_ms|[A-Za-z]*Ms|elapsed_time_seconds)\\?":)\s*-?\d+(?:\.\d+)?')
# Ids the CLI makes up per run for background tasks.
TASK_ID_RE = re.compile(r'\\?"(task_id|run_id|agent_id)\\?":\\?"([^"\\]+)\\?"')


def sanitized(path):
    """How the CLI turns a path into a directory name (~/.claude/projects/<this>)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def make_normalizer(run):
    paths = [
        (run.repo, FIXTURE_ROOT + "/repo"),
        (run.home, FIXTURE_ROOT + "/home"),
        (run.root, FIXTURE_ROOT),
    ]
    for real, fake in list(paths):
        if os.path.realpath(real) != real:
            paths.append((os.path.realpath(real), fake))
    paths += [(sanitized(real), sanitized(fake)) for real, fake in paths]
    pid = str(run.proc.pid)

    def normalize(header, records):
        uuids, ids = {}, {}
        ts_count = [0]

        def uuid_sub(m):
            key = m.group(0).lower()
            if key not in uuids:
                uuids[key] = "00000000-0000-4000-8000-%012d" % (len(uuids) + 1)
            return uuids[key]

        def ts_sub(m):
            ts_count[0] += 1
            n = ts_count[0]
            return "2026-01-01T00:%02d:%02d.%03dZ" % (n // 60000 % 60, n // 1000 % 60, n % 1000)

        def id_sub(m):
            field, value = m.group(1), m.group(2)
            key = (field, value)
            if key not in ids:
                ids[key] = "%s-%d" % (field.replace("_id", ""), sum(1 for k in ids if k[0] == field) + 1)
            return m.group(0).replace(value, ids[key])

        def norm(line):
            for real, fake in paths:
                line = line.replace(real, fake)
            line = line.replace("127.0.0.1:%d" % run.port, "127.0.0.1:PORT")
            line = re.sub(r'"pid":%s\b' % pid, '"pid":4242', line)
            line = line.replace("/cc-socks/%s.sock" % pid, "/cc-socks/4242.sock")
            line = UUID_RE.sub(uuid_sub, line)
            line = TS_RE.sub(ts_sub, line)
            line = DURATION_RE.sub(lambda m: m.group(1) + "0", line)
            line = TASK_ID_RE.sub(id_sub, line)
            for (field, value), fake in ids.items():
                line = line.replace(value, fake)
            return line

        header = dict(header, argv=[norm(a) for a in header["argv"]])
        out = [{"t": round(i * 0.01, 2), "dir": r["dir"], "line": norm(r["line"])} for i, r in enumerate(records)]
        return header, out

    return normalize


# ---------------------------------------------------------------------------------------------


def start_mock(log_path=None):
    cmd = [sys.executable, MOCK, "--port", "0"] + (["--log", log_path] if log_path else [])
    mock = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    first = mock.stdout.readline().split()
    if len(first) != 2 or first[0] != "PORT":
        mock.kill()
        raise SystemExit("mock_anthropic.py did not print its port")
    return mock, int(first[1])


def find_cli():
    cli = os.environ.get("NUCLEIC_CLAUDE_BIN") or shutil.which("claude")
    if not cli or not os.path.exists(cli):
        raise SystemExit("no Claude CLI: set NUCLEIC_CLAUDE_BIN (eval \"$(scripts/peers.sh)\")")
    return cli


def main(argv=None):
    ap = argparse.ArgumentParser(description="Record Claude Code fixtures against the mock model API.")
    ap.add_argument("--scenario", action="append", choices=sorted(BY_NAME), help="a scenario (repeatable)")
    ap.add_argument("--all", action="store_true", help="every scenario")
    ap.add_argument("--out", default=os.path.join(REPO_ROOT, "Fixtures", "claude"))
    ap.add_argument("--print", dest="echo", action="store_true", help="echo the lines live on stderr")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--mock-log", help="the mock's request log")
    ap.add_argument("--jobs", type=int, default=4, help="scenarios recorded at the same time")
    args = ap.parse_args(argv)
    names = [s.name for s in SCENARIOS] if args.all or not args.scenario else args.scenario
    cli = find_cli()
    os.makedirs(args.out, exist_ok=True)
    mock, port = start_mock(args.mock_log)
    failures = []
    lock = threading.Lock()

    def record(name):
        started = time.monotonic()
        run = Run(BY_NAME[name], port, cli, echo=args.echo, keep=args.keep)
        ok = run.run()
        took = time.monotonic() - started
        with lock:
            if ok:
                run.writer.write(os.path.join(args.out, name + ".jsonl"), make_normalizer(run))
                print("%-18s %3d lines  exit %s  %.1fs" % (name, len(run.writer.records), run.exit_code, took))
            else:
                failures.append(name)
                print("%-18s TIMEOUT after %.1fs (not written)" % (name, took))
            if args.keep:
                print("  scratch: %s" % run.root)
            sys.stdout.flush()
        run.cleanup()

    try:
        pending = list(names)
        threads = []
        while pending or threads:
            threads = [t for t in threads if t.is_alive()]
            while pending and len(threads) < max(1, args.jobs):
                t = threading.Thread(target=record, args=(pending.pop(0),))
                t.start()
                threads.append(t)
            time.sleep(0.05)
    finally:
        mock.kill()
        mock.wait()
    if failures:
        print("failed: " + ", ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
