#!/usr/bin/env python3
"""A scripted, stateless mock of the Anthropic Messages API for driving the real Claude Code CLI.

Usage: mock_anthropic.py [--port 0] [--log FILE] [--dump DIR]

Binds 127.0.0.1, prints `PORT <n>` as its first stdout line (flushed), then serves until killed.

Endpoints
  POST /v1/messages               stream:true -> Anthropic SSE; otherwise a JSON message
  POST /v1/messages/count_tokens  {"input_tokens": N}
  HEAD <any path>, GET /          200 (the CLI probes HEAD /api/hello unless
                                  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC is set)
  anything else                   404 {"type":"error","error":{"type":"not_found_error",...}}

Scripting is stateless. The scenario is the token `[[scenario:NAME]]` in the user's first prompt;
the step is derived from the conversation carried by each request:
  turn = how many user prompts carry `[[followup]]` (0 for the first prompt); a prompt the
         user sent mid-turn (Claude Code's "The user sent a new message while you were
         working:" note) joins the running turn and counts nothing
  step = how many assistant turns follow the last prompt that carries a token
Only "main" requests are scripted: those that carry tools (the agent loop). Requests without
tools (titles, summaries, other auxiliary calls) get a short canned answer.

Scenarios (the names are the contract with the Swift tests and record_claude.py):
  plain            text "Hello from the mock."
  tool-allow       Bash `echo hello > hello.txt` (after some text), then a final text
  deny-continue    Bash `rm -rf build`; after the tool_result, a text quoting it (the denial)
  modify           Bash `echo original > modified.txt` (the host rewrites it), final text
  ask              AskUserQuestion (one question, options Red/Blue); final text names the label
  ask-multi        AskUserQuestion with two questions, the first multiSelect
  two-tools        one message with Bash `echo one > one.txt` and `echo two > two.txt`
  interrupt        Bash `echo started > started.txt && sleep 30 && echo slept`
  interrupt-pending  Bash `rm -rf build` (the host interrupts before deciding); turn 1: text
  blocked-sleep    Bash `sleep 30`, which the CLI itself refuses
  readonly-auto    Bash `echo hi from the shell`, which the CLI runs without asking
  edit             Write <cwd>/notes.txt
  allow-always     Bash `touch again.txt` in every turn
  followup         turn 0: "first turn done"; a prompt with [[followup]]: "second turn done"
  followup-tool    turn 0: text; turn 1: Bash `echo followup > followup.txt`, then "second turn done"
  api-error        HTTP 500 api_error with `x-should-retry: false` (the CLI gives up at once)
  overloaded       HTTP 529 overloaded_error with `x-should-retry: false`
  overloaded-retry HTTP 529 without x-should-retry (the CLI retries; bound it with
                   CLAUDE_CODE_MAX_RETRIES)
  server-error-retry  HTTP 500 without x-should-retry (the CLI retries with backoff)
  invalid-request  HTTP 400 invalid_request_error (the CLI re-sends it 5 times with fallbacks)
  partial          a thinking block and a text, both in many small deltas
  slow             turn 0: a text streamed over ~2 s (to interrupt mid-stream); turn 1: text
An unknown or missing scenario answers like plain, with a note.

--log FILE   appends one JSON line per request: {"method","path","scenario","turn","step",
             "stream","tools","model","status","kind"}; kind is main|aux|count_tokens|other.
--dump DIR   also writes every request body to DIR/NNNN-<kind>.json and its headers to
             DIR/NNNN-<kind>.headers.json (for exploring the wire).
"""
import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCENARIO_RE = re.compile(r"\[\[scenario:([A-Za-z0-9_.-]+)\]\]")
FOLLOWUP_TOKEN = "[[followup]]"
MIDTURN_NOTE = "The user sent a new message while you were working:"
CWD_RE = re.compile(r"Primary working directory: ([^\s\\]+)")

# Fixed usage numbers keep the CLI's reported usage and cost identical between recordings.
USAGE_IN = 100
USAGE_OUT = 20


# ---------------------------------------------------------------------------------------------
# Conversation analysis


def blocks_of(message):
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def text_of(message):
    """The text a message carries outside tool results."""
    return "\n".join(b.get("text", "") for b in blocks_of(message) if b.get("type") == "text")


def tool_result_text(block):
    content = block.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


class Conversation:
    """What the mock needs from a /v1/messages request body."""

    def __init__(self, body):
        self.body = body
        self.messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        self.scenario = None
        self.turn = 0
        last_prompt = -1
        for i, m in enumerate(self.messages):
            if m.get("role") != "user":
                continue
            # A prompt the user sent mid-turn is a note inside the running turn, not a new
            # prompt: Claude Code 2.1.327 sends it as a `system` message, 2.1.332 as user text.
            text = text_of(m).split(MIDTURN_NOTE)[0]
            found = SCENARIO_RE.search(text)
            if found and self.scenario is None:
                self.scenario = found.group(1)
                last_prompt = i
            if FOLLOWUP_TOKEN in text:
                self.turn += 1
                last_prompt = i
        # Assistant turns after the last prompt; consecutive assistant messages count once.
        self.step = 0
        previous = None
        for m in self.messages[last_prompt + 1:]:
            role = m.get("role")
            if role == "assistant" and previous != "assistant":
                self.step += 1
            previous = role
        self.tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
        self.model = body.get("model") or "claude-mock"
        self.stream = bool(body.get("stream"))

    def cwd(self):
        """The working directory the CLI states in its environment section, if any."""
        found = CWD_RE.search(json.dumps(self.body.get("system")) + json.dumps(self.messages))
        return found.group(1) if found else None

    def last_tool_results(self):
        if not self.messages or self.messages[-1].get("role") != "user":
            return []
        return [b for b in blocks_of(self.messages[-1]) if b.get("type") == "tool_result"]

    def is_main(self):
        return bool(self.tools)


# ---------------------------------------------------------------------------------------------
# Scenarios. Each returns a Reply: content blocks and a stop reason, or an HTTP error.


class Reply:
    def __init__(self, blocks=None, stop_reason="end_turn", error=None, chunk=None, pace=0.0):
        self.blocks = blocks or []
        self.stop_reason = stop_reason
        self.error = error  # (status, error_type, message, headers) or None
        self.chunk = chunk  # text delta size (None: a few pieces)
        # Seconds between SSE events. 0: the whole response goes out in one write, which gives the
        # most stable order of the CLI's output (see docs/notes/claude-wire.md, "ordering").
        self.pace = pace


def text(t):
    return {"type": "text", "text": t}


def thinking(t):
    return {"type": "thinking", "thinking": t, "signature": "mock-signature-" + str(len(t))}


def tool_use(ident, name, inp):
    return {"type": "tool_use", "id": ident, "name": name, "input": inp}


def bash(ident, command, description):
    return tool_use(ident, "Bash", {"command": command, "description": description})


def tid(conv, n=0):
    """Deterministic, unique-per-step tool_use id."""
    slug = re.sub(r"[^A-Za-z0-9]", "", conv.scenario or "none")
    return "toolu_mock_%s_t%ds%dn%d" % (slug, conv.turn, conv.step, n)


def results_summary(conv):
    return "; ".join(tool_result_text(b).strip() for b in conv.last_tool_results())


def sc_plain(conv):
    return Reply([text("Hello from the mock.")])


def sc_tool_allow(conv):
    if conv.step == 0:
        return Reply([text("I will create the file."),
                      bash(tid(conv), "echo hello > hello.txt", "Create hello.txt")], "tool_use")
    return Reply([text("Created hello.txt.")])


def sc_deny_continue(conv):
    if conv.step == 0:
        return Reply([bash(tid(conv), "rm -rf build", "Remove the build directory")], "tool_use")
    results = conv.last_tool_results()
    denial = tool_result_text(results[0]).strip() if results else ""
    err = bool(results and results[0].get("is_error"))
    return Reply([text("Understood, I did not run it. The host said: %s (is_error=%s)" % (denial, str(err).lower()))])


def sc_modify(conv):
    if conv.step == 0:
        return Reply([bash(tid(conv), "echo original > modified.txt", "Write modified.txt")], "tool_use")
    return Reply([text("Wrote modified.txt. Tool said: %s" % (results_summary(conv) or "(no output)"))])


ASK_INPUT = {
    "questions": [
        {
            "question": "Which color should the button be?",
            "header": "Color",
            "options": [
                {"label": "Red", "description": "A warm red button"},
                {"label": "Blue", "description": "A calm blue button"},
            ],
            "multiSelect": False,
        }
    ]
}


def sc_ask(conv):
    if conv.step == 0:
        return Reply([text("I need to ask you something."),
                      tool_use(tid(conv), "AskUserQuestion", ASK_INPUT)], "tool_use")
    answer = results_summary(conv)
    chosen = [o["label"] for o in ASK_INPUT["questions"][0]["options"] if o["label"] in answer]
    return Reply([text("You chose: %s. (tool result: %s)" % (", ".join(chosen) or "nothing", answer))])


ASK_MULTI_INPUT = {
    "questions": [
        {
            "question": "Which sizes should the button come in?",
            "header": "Sizes",
            "options": [
                {"label": "Small", "description": "A small button"},
                {"label": "Medium", "description": "A medium button"},
                {"label": "Large", "description": "A large button"},
            ],
            "multiSelect": True,
        },
        {
            "question": "Which color should the button be?",
            "header": "Color",
            "options": [
                {"label": "Red", "description": "A warm red button"},
                {"label": "Blue", "description": "A calm blue button"},
            ],
            "multiSelect": False,
        },
    ]
}


def sc_ask_multi(conv):
    # Two questions, the first multiSelect.
    if conv.step == 0:
        return Reply([tool_use(tid(conv), "AskUserQuestion", ASK_MULTI_INPUT)], "tool_use")
    return Reply([text("Noted. (tool result: %s)" % results_summary(conv))])


def sc_two_tools(conv):
    if conv.step == 0:
        return Reply([text("Two files coming."),
                      bash(tid(conv, 0), "echo one > one.txt", "Create one.txt"),
                      bash(tid(conv, 1), "echo two > two.txt", "Create two.txt")], "tool_use")
    return Reply([text("Created one.txt and two.txt.")])


# A command starting with `sleep` is blocked by the CLI, and a read-only command (echo, sleep) is
# allowed without asking; the redirect makes the CLI ask the host first.
INTERRUPT_COMMAND = "echo started > started.txt && sleep 30 && echo slept"


def sc_interrupt(conv):
    if conv.step == 0:
        return Reply([bash(tid(conv), INTERRUPT_COMMAND, "Wait for a while")], "tool_use")
    return Reply([text("The sleep finished. Tool said: %s" % results_summary(conv))])


def sc_blocked_sleep(conv):
    # The CLI refuses a standalone `sleep N` itself, before asking for permission.
    if conv.step == 0:
        return Reply([bash(tid(conv), "sleep 30", "Wait for a while")], "tool_use")
    return Reply([text("The CLI refused: %s" % results_summary(conv))])


def sc_followup(conv):
    if conv.turn == 0:
        return Reply([text("first turn done")])
    return Reply([text("second turn done")])


def sc_followup_tool(conv):
    # Like followup, but the second turn runs a Bash command that needs approval.
    if conv.turn == 0:
        return Reply([text("first turn done")])
    if conv.step == 0:
        return Reply([bash(tid(conv), "echo followup > followup.txt", "Create followup.txt")], "tool_use")
    return Reply([text("second turn done")])


def sc_readonly_auto(conv):
    # A read-only command (echo without redirect) runs without a can_use_tool request.
    if conv.step == 0:
        return Reply([bash(tid(conv), "echo hi from the shell", "Say hi")], "tool_use")
    return Reply([text("The shell said: %s" % results_summary(conv))])


def sc_interrupt_pending(conv):
    # The host interrupts while the permission request for this command is unanswered.
    if conv.turn == 0:
        if conv.step == 0:
            return Reply([bash(tid(conv), "rm -rf build", "Remove the build directory")], "tool_use")
        return Reply([text("Not reached: the host interrupts first.")])
    return Reply([text("Still here after the interrupt.")])


def sc_allow_always(conv):
    # The same command in both turns: after an allow with updatedPermissions the second one
    # runs without a can_use_tool.
    if conv.step == 0:
        return Reply([bash(tid(conv), "touch again.txt", "Touch again.txt")], "tool_use")
    return Reply([text("Touched again.txt (turn %d)." % conv.turn)])


def sc_api_error(conv):
    # x-should-retry: false makes the CLI give up after this one request.
    return Reply(error=(500, "api_error", "mock: scripted api-error", {"x-should-retry": "false"}))


def sc_server_error_retry(conv):
    # A 500 without x-should-retry: the CLI retries with exponential backoff (up to
    # CLAUDE_CODE_MAX_RETRIES, default 10: minutes). Not recorded; for exploring.
    return Reply(error=(500, "api_error", "mock: internal server error", {}))


def sc_invalid_request(conv):
    # A 400 is not retried as such, but the CLI re-sends the request up to 5 times with fallbacks
    # (no thinking display, then all deferred tools loaded) before it gives up.
    return Reply(error=(400, "invalid_request_error", "mock: scripted invalid request", {"x-should-retry": "false"}))


def sc_overloaded(conv):
    return Reply(error=(529, "overloaded_error", "Overloaded", {"x-should-retry": "false"}))


def sc_overloaded_retry(conv):
    # Without x-should-retry the CLI retries 529s with backoff (bounded by CLAUDE_CODE_MAX_RETRIES).
    return Reply(error=(529, "overloaded_error", "Overloaded", {}))


PARTIAL_TEXT = ("Streaming in small pieces: one, two, three, four, five, six, seven, eight, "
                "nine, ten. Done.")


def sc_partial(conv):
    return Reply([thinking("Let me think about how to answer in small pieces."), text(PARTIAL_TEXT)],
                 chunk=6)


def sc_slow(conv):
    # A text streamed slowly (0.25 s between events), for interrupting a turn mid-stream.
    if conv.turn == 0:
        return Reply([text("This answer streams slowly, piece by piece, so it can be interrupted.")],
                     chunk=12, pace=0.25)
    return Reply([text("Back after the interrupt.")])


def sc_edit(conv):
    if conv.step == 0:
        path = os.path.join(conv.cwd() or "/tmp", "notes.txt")
        return Reply([tool_use(tid(conv), "Write", {"file_path": path, "content": "from the mock\n"})],
                     "tool_use")
    return Reply([text("Wrote notes.txt. Tool said: %s" % results_summary(conv))])


SCENARIOS = {
    "plain": sc_plain,
    "tool-allow": sc_tool_allow,
    "deny-continue": sc_deny_continue,
    "modify": sc_modify,
    "ask": sc_ask,
    "ask-multi": sc_ask_multi,
    "two-tools": sc_two_tools,
    "interrupt": sc_interrupt,
    "blocked-sleep": sc_blocked_sleep,
    "readonly-auto": sc_readonly_auto,
    "interrupt-pending": sc_interrupt_pending,
    "followup": sc_followup,
    "followup-tool": sc_followup_tool,
    "allow-always": sc_allow_always,
    "api-error": sc_api_error,
    "overloaded": sc_overloaded,
    "invalid-request": sc_invalid_request,
    "overloaded-retry": sc_overloaded_retry,
    "server-error-retry": sc_server_error_retry,
    "partial": sc_partial,
    "slow": sc_slow,
    "edit": sc_edit,
}


def script(conv):
    if not conv.is_main():
        return Reply([text("Mock title")])
    fn = SCENARIOS.get(conv.scenario)
    if fn is None:
        return Reply([text("Hello from the mock. (no scenario %r)" % conv.scenario)])
    return fn(conv)


# ---------------------------------------------------------------------------------------------
# Encoding


def message_id(conv, kind):
    slug = re.sub(r"[^A-Za-z0-9]", "", conv.scenario or "none")
    return "msg_mock_%s_%s_t%ds%d" % (kind, slug, conv.turn, conv.step)


def usage(output_tokens):
    return {
        "input_tokens": USAGE_IN,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output_tokens,
        "service_tier": "standard",
    }


def message_json(conv, reply, kind):
    return {
        "id": message_id(conv, kind),
        "type": "message",
        "role": "assistant",
        "model": conv.model,
        "content": reply.blocks,
        "stop_reason": reply.stop_reason,
        "stop_sequence": None,
        "usage": usage(USAGE_OUT),
    }


def pieces(s, n):
    """s split in n roughly equal, non-empty pieces (fewer if s is short)."""
    if not s:
        return [s]
    n = max(1, min(n, len(s)))
    size = -(-len(s) // n)
    return [s[i:i + size] for i in range(0, len(s), size)]


def sse_events(conv, reply, kind):
    start = message_json(conv, reply, kind)
    start["content"] = []
    start["stop_reason"] = None
    start["usage"] = usage(1)
    yield "message_start", {"type": "message_start", "message": start}
    for i, b in enumerate(reply.blocks):
        t = b["type"]
        if t == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            parts = [b["text"][j:j + reply.chunk] for j in range(0, len(b["text"]), reply.chunk)] \
                if reply.chunk else pieces(b["text"], 3)
            if i == 0:
                yield "ping", {"type": "ping"}
            for p in parts:
                yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "text_delta", "text": p}}
        elif t == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            parts = [b["thinking"][j:j + reply.chunk] for j in range(0, len(b["thinking"]), reply.chunk)] \
                if reply.chunk else pieces(b["thinking"], 3)
            for p in parts:
                yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "thinking_delta", "thinking": p}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "signature_delta", "signature": b["signature"]}}
        elif t == "tool_use":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"],
                                                            "input": {}}}
            js = json.dumps(b["input"], separators=(",", ":"))
            for p in pieces(js, 4):
                yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                              "delta": {"type": "input_json_delta", "partial_json": p}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                            "usage": {"output_tokens": USAGE_OUT}}
    yield "message_stop", {"type": "message_stop"}


# ---------------------------------------------------------------------------------------------
# HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-anthropic/1"
    sys_version = ""

    def log_message(self, fmt, *args):  # quiet: the request log is --log
        pass

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def send_json(self, status, obj, headers=None):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_mock")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def send_error_json(self, status, etype, message, headers=None):
        self.send_json(status, {"type": "error", "error": {"type": etype, "message": message},
                                "request_id": "req_mock"}, headers)

    def record(self, **entry):
        self.server.record(dict(method=self.command, path=self.path, **entry))

    def do_HEAD(self):
        self.record(kind="other", status=200)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        path = self.path.split("?")[0]
        if path in ("/", ""):
            self.record(kind="other", status=200)
            self.send_json(200, {"ok": True})
            return
        self.record(kind="other", status=404)
        self.send_error_json(404, "not_found_error", "mock: no such endpoint %s %s" % (self.command, path))

    def do_POST(self):
        raw = self.read_body()
        path = self.path.split("?")[0]
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = None
        if path == "/v1/messages/count_tokens":
            self.server.dump("count_tokens", raw, self.headers)
            conv = Conversation(body or {})
            n = max(1, len(raw) // 4)
            self.record(kind="count_tokens", scenario=conv.scenario, status=200)
            self.send_json(200, {"input_tokens": n})
            return
        if path != "/v1/messages":
            self.server.dump("other", raw, self.headers)
            self.record(kind="other", status=404)
            self.send_error_json(404, "not_found_error", "mock: no such endpoint %s %s" % (self.command, path))
            return
        if not isinstance(body, dict):
            self.record(kind="other", status=400)
            self.send_error_json(400, "invalid_request_error", "mock: body is not a JSON object")
            return
        conv = Conversation(body)
        kind = "main" if conv.is_main() else "aux"
        self.server.dump(kind, raw, self.headers)
        reply = script(conv)
        entry = dict(kind=kind, scenario=conv.scenario, turn=conv.turn, step=conv.step, stream=conv.stream,
                     tools=len(conv.tools), model=conv.model)
        if reply.error:
            status, etype, message, headers = reply.error
            self.record(status=status, **entry)
            self.send_error_json(status, etype, message, headers)
            return
        self.record(status=200, **entry)
        if not conv.stream:
            self.send_json(200, message_json(conv, reply, kind))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", "req_mock")
        self.end_headers()
        try:
            events = [("event: %s\ndata: %s\n\n" % (e, json.dumps(d))).encode()
                      for e, d in sse_events(conv, reply, kind)]
            if reply.pace:
                for chunk in events:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    self.wfile.flush()
                    time.sleep(reply.pace)
            else:
                body = b"".join(events)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, addr, log_path=None, dump_dir=None):
        super().__init__(addr, Handler)
        self.log_path = log_path
        self.dump_dir = dump_dir
        self.lock = threading.Lock()
        self.counter = 0

    def record(self, entry):
        if not self.log_path:
            return
        with self.lock:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, sort_keys=True) + "\n")

    def dump(self, kind, raw, headers=None):
        if not self.dump_dir:
            return
        with self.lock:
            self.counter += 1
            n = self.counter
        os.makedirs(self.dump_dir, exist_ok=True)
        with open(os.path.join(self.dump_dir, "%04d-%s.json" % (n, kind)), "wb") as f:
            f.write(raw)
        if headers is not None:
            with open(os.path.join(self.dump_dir, "%04d-%s.headers.json" % (n, kind)), "w") as f:
                json.dump(dict(headers.items()), f, indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", help="append one JSON line per request to this file")
    ap.add_argument("--dump", help="write every request body into this directory")
    args = ap.parse_args(argv)
    server = Server(("127.0.0.1", args.port), args.log, args.dump)
    sys.stdout.write("PORT %d\n" % server.server_address[1])
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
