"""Records ACP agents into Fixtures/acp/, one file a scenario: the reference agent
(acp_reference_agent.py, `<scenario>.jsonl`), and with --agent kimi / --agent vibe the real Kimi CLI
(offline, its scripted provider) and Mistral Vibe (against mock_chat.py), `kimi-<scenario>.jsonl`
and `vibe-<scenario>.jsonl`.

The recorder is the host: it writes what Nucleic's AcpCodec writes (initialize, session/new in the
worktree, session/set_mode to a manifest's mode, session/prompt, session/cancel, permission answers
by option kind) and serves the agent's fs/* and terminal/* requests as Nucleic does (inside the
scratch worktree only; outside: -32602).

Run with the ACP virtualenv's Python (scripts/peers.sh exports NUCLEIC_ACP_PYTHON, and
NUCLEIC_KIMI_BIN / NUCLEIC_VIBE_BIN for the real agents):
  $NUCLEIC_ACP_PYTHON Tests/Peers/record_acp.py --all
  $NUCLEIC_ACP_PYTHON Tests/Peers/record_acp.py --scenario permission-allow --print
  $NUCLEIC_ACP_PYTHON Tests/Peers/record_acp.py --agent kimi --all
Normalized: the scratch folder is /tmp/nucleic-fixture/repo (an agent's home /tmp/nucleic-fixture/home),
the reference agent's session ids ref-0000000N, the real agents' uuids 00000000-0000-4000-8000-00000000000N,
t is the record index x 0.01; per agent, what else varies (docs/FIXTURES.md). The agents' stderr
(the SDK's traceback for `error`, the real agents' logs) is left out: its paths, times and line
numbers belong to the virtualenv, not to the protocol.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata

from fixturelib import FixtureWriter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
AGENT = os.path.join(HERE, "acp_reference_agent.py")
FOLDER = "/tmp/nucleic-fixture/repo"


def rpc(**fields):
    return json.dumps({"jsonrpc": "2.0", **fields}, separators=(",", ":"))


class Host:
    """Nucleic's side of one recording: `command` started in `worktree` with `env` added to this
    process's environment; `mode`, when given, is sent with `session/set_mode` after `session/new`
    (what a manifest's `sessionMode` makes the codec do)."""

    def __init__(self, worktree, writer, echo, command=None, env=None, mode=None, settle=None):
        self.worktree = os.path.realpath(worktree)
        self.writer = writer
        self.echo = echo
        self.mode = mode
        # An update kind the agent sends on its own after session/new, at no fixed point: the
        # host waits for it before going on, so that re-recording puts it in one place.
        self.settle = settle
        self.seen_updates = set()
        self.proc = subprocess.Popen(command or [sys.executable, AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=self.worktree, text=True, bufsize=1,
                                     env={**os.environ, **(env or {})})
        self.next_id = 0
        self.session = None
        self.terminals = {}

    def send(self, line):
        self.writer.add("in", line)
        if self.echo:
            print("in ", line)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def read(self):
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("the agent closed stdout")
        line = line.rstrip("\n")
        self.writer.add("out", line)
        if self.echo:
            print("out", line)
        self.note(line)
        return line

    def note(self, line):
        try:
            kind = json.loads(line)["params"]["update"]["sessionUpdate"]
        except (ValueError, KeyError, TypeError):
            return
        self.seen_updates.add(kind)

    def request(self, method, params):
        id = self.next_id
        self.next_id += 1
        self.send(rpc(id=id, method=method, params=params))
        return id

    def start(self):
        self.request("initialize", {"protocolVersion": 1,
                                    "clientCapabilities": {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True},
                                    "clientInfo": {"name": "nucleic", "title": "Nucleic", "version": "0.1.0"}})
        self.until_reply()
        self.request("session/new", {"cwd": self.worktree, "mcpServers": []})
        self.session = self.until_reply()["result"]["sessionId"]
        while self.settle and self.settle not in self.seen_updates:
            self.read()
        if self.mode:
            self.request("session/set_mode", {"sessionId": self.session, "modeId": self.mode})
            self.until_reply()

    def prompt(self, text, on_update=None, permission="allow"):
        id = self.request("session/prompt", {"sessionId": self.session, "prompt": [{"type": "text", "text": text}]})
        return self.until_reply(id, on_update=on_update, permission=permission)

    def until_reply(self, id=None, on_update=None, permission="allow"):
        """Reads until the reply to the host's request `id` (the last one sent when None), serving
        what the agent asks meanwhile."""
        want = self.next_id - 1 if id is None else id
        while True:
            line = self.read()
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if "method" in m and "id" in m:
                self.serve(m, permission)
            elif "method" in m:
                if on_update:
                    on_update(self, m)
            elif m.get("id") == want:
                return m

    def serve(self, m, permission):
        method, id, p = m["method"], m["id"], m.get("params", {})
        if method == "session/request_permission":
            # As AcpCodec answers: allow is the agent's allow_once option, deny its reject_once.
            kinds = ("allow_once", "allow_always") if permission == "allow" else ("reject_once", "reject_always")
            options = {o["kind"]: o["optionId"] for o in reversed(p.get("options", []))}
            chosen = next((options[k] for k in kinds if k in options), None)
            outcome = {"outcome": "selected", "optionId": chosen} if chosen else {"outcome": "cancelled"}
            self.send(rpc(id=id, result={"outcome": outcome}))
        elif method in ("fs/read_text_file", "fs/write_text_file"):
            path = os.path.realpath(p["path"])
            if not (path == self.worktree or path.startswith(self.worktree + "/")):
                self.send(rpc(id=id, error={"code": -32602, "message": f"{p['path']} is outside the session's worktree ({self.worktree}): Nucleic serves files and terminals inside it only"}))
            elif method == "fs/read_text_file":
                with open(path) as f:
                    self.send(rpc(id=id, result={"content": f.read()}))
            else:
                with open(path, "w") as f:
                    f.write(p["content"])
                self.send(rpc(id=id, result=None))
        elif method == "terminal/create":
            tid = f"term-{len(self.terminals) + 1}"
            # As AcpCodec.terminalArgv: a command without args is a shell command line.
            argv = [p["command"]] + p["args"] if p.get("args") else ["/bin/sh", "-c", p["command"]]
            proc = subprocess.Popen(argv, cwd=p.get("cwd") or self.worktree,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            self.terminals[tid] = {"proc": proc, "output": None}
            self.send(rpc(id=id, result={"terminalId": tid}))
        elif method == "terminal/wait_for_exit":
            t = self.terminals[p["terminalId"]]
            t["output"] = t["proc"].communicate()[0].decode()
            self.send(rpc(id=id, result={"exitCode": t["proc"].returncode, "signal": None}))
        elif method == "terminal/output":
            t = self.terminals[p["terminalId"]]
            if t["output"] is None:  # asked before wait_for_exit: the (short) command's whole output, for a stable recording
                t["output"] = t["proc"].communicate()[0].decode()
            self.send(rpc(id=id, result={"output": t["output"] or "", "truncated": False,
                                         "exitStatus": {"exitCode": t["proc"].returncode, "signal": None}}))
        elif method in ("terminal/kill", "terminal/release"):
            t = self.terminals.get(p["terminalId"])
            if t and t["proc"].poll() is None:
                t["proc"].kill()
                t["proc"].wait()
            self.send(rpc(id=id, result=None))
        else:
            self.send(rpc(id=id, error={"code": -32601, "message": f"Nucleic does not handle {method}"}))

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


def cancel_after_first_chunk(host, m):
    if m.get("method") == "session/update" and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk":
        host.send(rpc(method="session/cancel", params={"sessionId": host.session}))


SCENARIOS = {
    "updates": lambda h: h.prompt("[[scenario:updates]] hello"),
    "permission-allow": lambda h: h.prompt("[[scenario:permission]] write a.txt"),
    "permission-deny": lambda h: h.prompt("[[scenario:permission]] write a.txt", permission="deny"),
    "outside": lambda h: h.prompt("[[scenario:outside]] read a file outside"),
    "terminal": lambda h: h.prompt("[[scenario:terminal]] run echo"),
    "error": lambda h: h.prompt("[[scenario:error]] fail"),
    "malformed": lambda h: h.prompt("[[scenario:malformed]] a bad line"),
    "cancel": lambda h: h.prompt("[[scenario:slow]] wait", on_update=cancel_after_first_chunk),
    "followup": lambda h: (h.prompt("[[scenario:updates]] first"), h.prompt("[[scenario:permission]] then write")),
}


UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def numbered(pattern, template):
    """A rewrite of each distinct match of `pattern` to `template` with its order of first appearance."""
    seen = {}
    return lambda text: re.sub(pattern, lambda m: seen.setdefault(m.group(0), template.format(len(seen) + 1)), text)


def normalizer(worktree, home, rewrites):
    """The fixture's normalization: the scratch folder (and the agent's home) to fixed paths, each
    of `rewrites` (functions of a line) applied in order, t the record index x 0.01."""
    def fix(text):
        text = text.replace(worktree, FOLDER)
        if home:
            text = text.replace(home, HOME)
        for rewrite in rewrites:
            text = rewrite(text)
        return text

    def run(header, records):
        for i, r in enumerate(records):
            r["t"] = round(i * 0.01, 2)
            r["line"] = fix(r["line"])
        return header, records
    return run


HOME = "/tmp/nucleic-fixture/home"


def venv_version(binary, package):
    """`package`'s version in the virtualenv of `binary` (its bin/ holds the virtualenv's python3)."""
    python = os.path.join(os.path.dirname(binary), "python3")
    return subprocess.run([python, "-c", f"from importlib import metadata; print(metadata.version({package!r}))"],
                          capture_output=True, text=True, check=True).stdout.strip()


class Reference:
    """The ACP reference agent (acp_reference_agent.py), on this Python's ACP SDK."""
    prefix = ""
    scenarios = SCENARIOS

    def __init__(self, scratch):
        self.home = None

    def header(self):
        version = metadata.version("agent-client-protocol")
        return f"acp_reference_agent.py (agent-client-protocol {version})", ["python3", "acp_reference_agent.py"]

    def host(self, worktree, writer, echo, name):
        return Host(worktree, writer, echo)

    def rewrites(self):
        return [numbered(r"ref-[0-9a-f]{8}", "ref-{:08d}")]

    def close(self):
        pass


def kimi_text(text, thinking=None):
    """One script of Kimi's scripted provider (`_scripted_echo`): the lines of its echo DSL."""
    return (f"think: {thinking}\n" if thinking else "") + f"text: {text}\nusage: input_other=10 output=5"


def kimi_tool(call_id, name, arguments):
    call = {"arguments": json.dumps(arguments, sort_keys=True), "id": call_id, "name": name}
    return "tool_call: " + json.dumps(call, sort_keys=True)


# Kimi CLI: each scenario is (the scripts its provider answers model calls with, in order; the host's part).
KIMI_SCENARIOS = {
    "text": ([kimi_text("Hello from kimi", thinking="pondering")], lambda h: h.prompt("say hello")),
    "shell-allow": ([kimi_tool("call_s1", "Shell", {"command": "echo hi > out.txt && cat out.txt"}), kimi_text("done with shell")],
                    lambda h: h.prompt("run it")),
    "shell-deny": ([kimi_tool("call_s1", "Shell", {"command": "echo hi > out.txt"}), kimi_text("not reached")],
                   lambda h: h.prompt("run it", permission="deny")),
    "write": ([kimi_tool("call_w1", "WriteFile", {"content": "hello\n", "path": "hello.txt"}), kimi_text("wrote it")],
              lambda h: h.prompt("make hello")),
    "model-error": (["error: 400 scripted failure", kimi_text("back")],
                    lambda h: (h.prompt("fail"), h.prompt("again"))),
    # No model configured: `session/prompt` fails (JSON-RPC -32000).
    "agent-error": (None, lambda h: h.prompt("fail")),
}


class Kimi:
    """Kimi CLI (`kimi acp`, NUCLEIC_KIMI_BIN), offline through its scripted provider, in a
    private KIMI_SHARE_DIR with a stand-in login (as KimiEndToEndTests drives it)."""
    prefix = "kimi-"
    scenarios = {name: drive for name, (_, drive) in KIMI_SCENARIOS.items()}

    def __init__(self, scratch):
        self.binary = os.environ.get("NUCLEIC_KIMI_BIN") or sys.exit("record_acp: --agent kimi needs NUCLEIC_KIMI_BIN (scripts/peers.sh)")
        self.home = os.path.join(scratch, "home")

    def header(self):
        return f"kimi-cli {venv_version(self.binary, 'kimi-cli')}", ["kimi", "acp"]

    def host(self, worktree, writer, echo, name):
        scripts = KIMI_SCENARIOS[name][0]
        os.makedirs(os.path.join(self.home, "credentials"), exist_ok=True)
        with open(os.path.join(self.home, "config.toml"), "w") as f:
            f.write(f'default_model = "{"scripted" if scripts is not None else ""}"\ntelemetry = false\n\n'
                    '[providers.scripted]\ntype = "_scripted_echo"\nbase_url = ""\napi_key = ""\n\n'
                    '[models.scripted]\nprovider = "scripted"\nmodel = "scripted"\nmax_context_size = 100000\n')
        # `kimi acp` refuses session/new without a login, whatever the provider: a token that never
        # expires stands in for one (nothing is sent with it offline).
        with open(os.path.join(self.home, "credentials", "kimi-code.json"), "w") as f:
            f.write('{"access_token":"offline","refresh_token":"","expires_at":0,"scope":"","token_type":"Bearer","expires_in":0}')
        with open(os.path.join(self.home, "scripts.json"), "w") as f:
            json.dump(scripts or [], f)
        env = {"KIMI_SHARE_DIR": self.home, "HOME": self.home, "KIMI_SCRIPTED_ECHO_SCRIPTS": os.path.join(self.home, "scripts.json")}
        return Host(worktree, writer, echo, command=[self.binary, "acp"], env=env)

    def rewrites(self):
        # Its initialize names the program for a terminal login: the virtualenv's path, shown bare.
        return [lambda text: text.replace(self.binary, "kimi"), numbered(UUID, "00000000-0000-4000-8000-{:012d}")]

    def close(self):
        pass


# Mistral Vibe against mock_chat.py: the mock reads its scenario from the prompt's [[scenario:NAME]].
VIBE_SCENARIOS = {
    "think": lambda h: h.prompt("[[scenario:think]] hello"),
    "bash-allow": lambda h: h.prompt("[[scenario:bash]] run it"),
    "bash-deny": lambda h: h.prompt("[[scenario:bash]] run it", permission="deny"),
    "write": lambda h: h.prompt("[[scenario:write]] make hello"),
    "error": lambda h: h.prompt("[[scenario:error]] fail"),
}


class Vibe:
    """Mistral Vibe (`vibe-acp`, NUCLEIC_VIBE_BIN) in a private VIBE_HOME, its provider the
    scripted chat-completions mock (mock_chat.py) on loopback, in its `ask` mode as the manifest
    sets it (as VibeEndToEndTests drives it)."""
    prefix = "vibe-"
    scenarios = VIBE_SCENARIOS

    def __init__(self, scratch):
        self.binary = os.environ.get("NUCLEIC_VIBE_BIN") or sys.exit("record_acp: --agent vibe needs NUCLEIC_VIBE_BIN (scripts/peers.sh)")
        self.home = os.path.join(scratch, "home")
        self.mock = subprocess.Popen([sys.executable, os.path.join(HERE, "mock_chat.py"), "--port", "0"],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.mock.stdout.readline().split()[1])

    def header(self):
        return f"mistral-vibe {venv_version(self.binary, 'mistral-vibe')}", ["vibe-acp"]

    def host(self, worktree, writer, echo, name):
        os.makedirs(self.home, exist_ok=True)
        with open(os.path.join(self.home, "config.toml"), "w") as f:
            f.write(f'active_model = "mock"\nenable_auto_update = false\n\n[[providers]]\nname = "mock"\n'
                    f'api_base = "http://127.0.0.1:{self.port}/v1"\napi_key_env_var = "MOCK_API_KEY"\napi_style = "openai"\n\n'
                    '[[models]]\nname = "mock-model"\nprovider = "mock"\nalias = "mock"\n')
        env = {"VIBE_HOME": self.home, "HOME": self.home, "MOCK_API_KEY": "test"}
        return Host(worktree, writer, echo, command=[self.binary], env=env, mode="ask", settle="available_commands_update")

    def rewrites(self):
        # Its session title update carries the time; its error messages name the mock's port.
        return [numbered(UUID, "00000000-0000-4000-8000-{:012d}"),
                lambda text: re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?", "2026-01-01T00:00:00.000000", text),
                lambda text: text.replace(f"127.0.0.1:{self.port}", "127.0.0.1:PORT")]

    def close(self):
        self.mock.kill()
        self.mock.wait()


AGENTS = {"reference": Reference, "kimi": Kimi, "vibe": Vibe}


def record(agent_class, name, out_dir, echo):
    scratch = os.path.realpath(tempfile.mkdtemp(prefix="nucleic-acp-rec-"))
    agent = agent_class(scratch)
    # The reference agent runs in the scratch folder itself; the others get a repo beside their home.
    worktree = scratch if agent.home is None else os.path.join(scratch, "repo")
    os.makedirs(worktree, exist_ok=True)
    cli, argv = agent.header()
    writer = FixtureWriter("acp", cli, argv, name)
    try:
        host = agent.host(worktree, writer, echo, name)
        try:
            host.start()
            agent.scenarios[name](host)
        finally:
            host.close()
    finally:
        agent.close()
    os.makedirs(out_dir, exist_ok=True)
    writer.write(os.path.join(out_dir, agent.prefix + name + ".jsonl"), normalizer(worktree, agent.home, agent.rewrites()))
    shutil.rmtree(scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", choices=sorted(AGENTS), default="reference",
                    help="which agent to record (kimi: NUCLEIC_KIMI_BIN; vibe: NUCLEIC_VIBE_BIN); files are <prefix><scenario>.jsonl")
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--scenario", action="append", default=[])
    ap.add_argument("--out", default=os.path.join(ROOT, "Fixtures", "acp"))
    ap.add_argument("--print", action="store_true")
    args = ap.parse_args()
    agent = AGENTS[args.agent]
    names = list(agent.scenarios) if args.all else args.scenario
    if not names:
        ap.error("give --all or --scenario NAME")
    for name in names:
        record(agent, name, args.out, args.print)
        print(f"recorded {agent.prefix}{name}", file=sys.stderr)


if __name__ == "__main__":
    main()
