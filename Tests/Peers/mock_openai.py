#!/usr/bin/env python3
"""A scripted mock of the OpenAI Responses API for driving the real Codex CLI offline.

Usage: python3 mock_openai.py [--port 0] [--log FILE] [--dump DIR]

Binds 127.0.0.1, prints `PORT <n>` as its first stdout line (flushed), then serves until killed.
Python 3 standard library only. --log appends one JSON line per request (path, scenario, step,
turn, status, the items answered); --dump writes every request's headers and body to DIR.

Codex is pointed at it with (see docs/notes/codex-wire.md):
  -c model_provider=mock -c model_providers.mock.name=mock      (the name is required)
  -c model_providers.mock.base_url=http://127.0.0.1:PORT/v1
  -c model_providers.mock.wire_api=responses -c model_providers.mock.env_key=MOCK_API_KEY
and MOCK_API_KEY=<anything>. Add -c model_providers.mock.request_max_retries=0 and
-c model_providers.mock.stream_max_retries=0 when a failing API should end the turn at once.

Routes: POST /v1/responses (SSE, or JSON when "stream": false); GET /v1/models (a one-model list;
Codex 0.163.0 never asked for it); anything else 404.

Scripting is stateless: the scenario is the token `[[scenario:NAME]]` in the first user prompt of
the conversation (Codex resends the whole conversation on every request), and the step within the
scenario is the number of function_call_output / custom_tool_call_output items after the latest
user prompt. A later prompt containing `[[followup]]` selects a scenario's follow-up script.
Requests without a scenario token (auxiliary calls; none were seen from 0.163.0) get "OK.".
So any number of concurrent tests can share one mock. Ids in the answers are deterministic
(msg_/fc_/ctc_/rs_/call_<scenario>_t<turn>_s<step>_<index>); Codex uses call_id as the item id of
commandExecution / fileChange items and the message / reasoning id as the item id of
agentMessage / reasoning items.

Scenarios (the names are the contract with the Swift tests):
  plain           text "Hello from the mock."
  tool-allow      exec_command `echo hello > hello.txt`, then text
  deny-continue   exec_command `rm -rf build`; after the output, text saying whether it was declined
  session-accept  exec_command `echo one >> log.txt` twice (the second after the first's output),
                  then text; [[followup]]: `echo one >> log.txt`, then `echo two >> log.txt`, text
  file-change     apply_patch (freeform) adding notes.txt, then text (says so if declined);
                  [[followup]]: apply_patch updating notes.txt, then text
  interrupt       exec_command `sleep 30` (the host interrupts)
  followup        "first turn done"; a prompt containing [[followup]] gets "second turn done"
  api-error       HTTP 400 with an OpenAI error body (Codex never retries a 400);
                  [[followup]]: text "Working again."
  server-error    HTTP 500 every time (Codex retries: request_max_retries x stream_max_retries)
  stream-error    HTTP 200 whose SSE stream ends with `response.failed`
  retry           the first request of a turn fails with HTTP 500, the retry succeeds (the only
                  scenario with state, keyed by Codex's turn id from x-codex-turn-metadata)
  two-tools       two exec_command calls in one response (parallel tool calls; the stream stalls
                  0.1 s between them and they sleep 0.5 s / 1.5 s, so the order is fixed), then text
  reasoning       a reasoning item with a summary, then text (usage with cached and reasoning tokens)
  question        request_user_input with one question (only works in Plan mode), then text
                  quoting the chosen labels
  exec-fail       exec_command `ls /nonexistent-nucleic` (exits 2), then text
  output-stream   exec_command printing three lines 0.3 s apart, then text
  sandbox-denied  exec_command `sleep 0.5; echo probe > /var/tmp/nucleic-sandbox-probe.txt`, then text
  sandbox-denied-fast  the same without the sleep (fails at once inside the sandbox)
  exec            runs the command given as [[cmd:COMMAND]] in the latest prompt, then text (a probe)
"""
import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCENARIO_RE = re.compile(r"\[\[scenario:([A-Za-z0-9_-]+)\]\]")
FOLLOWUP_TOKEN = "[[followup]]"
CMD_RE = re.compile(r"\[\[cmd:(.*?)\]\]", re.S)

USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 120,
}

USAGE_REASONING = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 40},
    "output_tokens": 30,
    "output_tokens_details": {"reasoning_tokens": 12},
    "total_tokens": 130,
}

PATCH_NOTES = "*** Begin Patch\n*** Add File: notes.txt\n+Notes from the mock.\n*** End Patch\n"
PATCH_NOTES_UPDATE = (
    "*** Begin Patch\n*** Update File: notes.txt\n@@\n-Notes from the mock.\n+Notes from the mock, updated.\n*** End Patch\n"
)

QUESTIONS = {
    "questions": [
        {
            "id": "db_choice",
            "header": "Database",
            "question": "Which database should the tests use?",
            "options": [
                {"label": "SQLite (Recommended)", "description": "Fast and needs no server."},
                {"label": "Postgres", "description": "Closest to production."},
            ],
        }
    ]
}


# ---------------------------------------------------------------------------------------------
# Reading a Responses API request


def _content_text(content):
    """Text of a message's content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    parts = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "".join(parts)


def _output_text(output):
    """Text of a function_call_output / custom_tool_call_output `output` (string or content list)."""
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return _content_text(output.get("content")) or json.dumps(output)
    if isinstance(output, list):
        return _content_text(output)
    return ""


def _is_prompt(item):
    """A user message typed by the user (not Codex's injected <environment_context> and the like)."""
    if item.get("type", "message") != "message" or item.get("role") != "user":
        return False
    text = _content_text(item.get("content")).lstrip()
    return not text.startswith("<")


class Conversation:
    """What the mock needs to know about one request."""

    def __init__(self, body):
        items = body.get("input") or []
        if isinstance(items, str):
            items = [{"type": "message", "role": "user", "content": items}]
        self.has_tools = bool(body.get("tools"))
        # A user message right after a tool call's output is not a new prompt but a steer: the
        # host's `turn/steer` (Nucleic carries a deny message that way). It does not restart the
        # scenario's steps; its text is kept so a scenario can quote it.
        prompts, self.steers = [], []
        previous = None
        for i, item in enumerate(items):
            if isinstance(item, dict) and _is_prompt(item):
                if previous in ("function_call_output", "custom_tool_call_output"):
                    self.steers.append(_content_text(item.get("content")))
                else:
                    prompts.append(i)
            if isinstance(item, dict) and item.get("type") != "reasoning":
                previous = item.get("type", "message")
        self.scenario = None
        for i in prompts:
            m = SCENARIO_RE.search(_content_text(items[i].get("content")))
            if m:
                self.scenario = m.group(1)
                break
        self.last_prompt = _content_text(items[prompts[-1]].get("content")) if prompts else ""
        m = CMD_RE.search(self.last_prompt)
        self.command = m.group(1) if m else None
        self.turn_number = len(prompts)  # 1 for the first user prompt of the thread
        after = items[prompts[-1] + 1:] if prompts else items
        self.calls = [i for i in after if isinstance(i, dict) and i.get("type") in ("function_call", "custom_tool_call")]
        self.outputs = [
            i for i in after
            if isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")
        ]
        self.step = len(self.outputs)

    def output_texts(self):
        return [_output_text(o.get("output")) for o in self.outputs]


# ---------------------------------------------------------------------------------------------
# Writing a Responses API SSE stream


class Stream:
    """Builds the SSE events of one response; ids are deterministic per (scenario, turn, step)."""

    def __init__(self, tag):
        self.tag = tag
        self.rid = "resp_" + tag
        self.events = [("response.created", {"type": "response.created", "response": {"id": self.rid}})]
        self.index = 0
        self.usage = USAGE

    def _add(self, kind, payload):
        payload = dict(type=kind, **payload)
        self.events.append((kind, payload))

    def _next(self):
        i = self.index
        self.index += 1
        return i

    def text(self, text, chunks=2):
        i = self._next()
        item_id = "msg_%s_%d" % (self.tag, i)
        self._add("response.output_item.added", {
            "output_index": i,
            "item": {"type": "message", "role": "assistant", "id": item_id, "status": "in_progress", "content": []},
        })
        self._add("response.content_part.added", {
            "item_id": item_id, "output_index": i, "content_index": 0,
            "part": {"type": "output_text", "text": "", "annotations": []},
        })
        for piece in _split(text, chunks):
            self._add("response.output_text.delta", {"item_id": item_id, "output_index": i, "content_index": 0, "delta": piece})
        self._add("response.output_text.done", {"item_id": item_id, "output_index": i, "content_index": 0, "text": text})
        self._add("response.output_item.done", {
            "output_index": i,
            "item": {
                "type": "message", "role": "assistant", "id": item_id, "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            },
        })

    def reasoning(self, summary):
        i = self._next()
        item_id = "rs_%s_%d" % (self.tag, i)
        self._add("response.output_item.added", {
            "output_index": i, "item": {"type": "reasoning", "id": item_id, "summary": []},
        })
        self._add("response.reasoning_summary_part.added", {
            "item_id": item_id, "output_index": i, "summary_index": 0, "part": {"type": "summary_text", "text": ""},
        })
        for piece in _split(summary, 2):
            self._add("response.reasoning_summary_text.delta", {
                "item_id": item_id, "output_index": i, "summary_index": 0, "delta": piece,
            })
        self._add("response.reasoning_summary_text.done", {
            "item_id": item_id, "output_index": i, "summary_index": 0, "text": summary,
        })
        self._add("response.output_item.done", {
            "output_index": i,
            "item": {
                "type": "reasoning", "id": item_id,
                "summary": [{"type": "summary_text", "text": summary}],
                "encrypted_content": None,
            },
        })

    def function_call(self, name, arguments):
        i = self._next()
        item_id = "fc_%s_%d" % (self.tag, i)
        call_id = "call_%s_%d" % (self.tag, i)
        args = json.dumps(arguments, separators=(",", ":"))
        self._add("response.output_item.added", {
            "output_index": i,
            "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": "", "status": "in_progress"},
        })
        self._add("response.function_call_arguments.delta", {"item_id": item_id, "output_index": i, "delta": args})
        self._add("response.function_call_arguments.done", {"item_id": item_id, "output_index": i, "arguments": args})
        self._add("response.output_item.done", {
            "output_index": i,
            "item": {"type": "function_call", "id": item_id, "call_id": call_id, "name": name, "arguments": args, "status": "completed"},
        })

    def custom_call(self, name, input_text):
        i = self._next()
        item_id = "ctc_%s_%d" % (self.tag, i)
        call_id = "call_%s_%d" % (self.tag, i)
        self._add("response.output_item.added", {
            "output_index": i,
            "item": {"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": name, "input": "", "status": "in_progress"},
        })
        self._add("response.custom_tool_call_input.delta", {"item_id": item_id, "output_index": i, "delta": input_text})
        self._add("response.custom_tool_call_input.done", {"item_id": item_id, "output_index": i, "input": input_text})
        self._add("response.output_item.done", {
            "output_index": i,
            "item": {"type": "custom_tool_call", "id": item_id, "call_id": call_id, "name": name, "input": input_text, "status": "completed"},
        })

    def completed(self):
        self._add("response.completed", {"response": {"id": self.rid, "status": "completed", "usage": self.usage}})

    def failed(self, code, message):
        self._add("response.failed", {
            "response": {"id": self.rid, "status": "failed", "error": {"code": code, "message": message}},
        })

    def pause(self, seconds):
        """The stream stalls here for `seconds` (the events so far are flushed first)."""
        self.events.append((None, seconds))

    def chunks(self):
        """The SSE bytes, split where the stream pauses: [(bytes, pause seconds after)]."""
        out, current = [], []
        for kind, payload in self.events:
            if kind is None:
                out.append(("".join(current).encode("utf-8"), payload))
                current = []
            else:
                current.append("event: %s\ndata: %s\n\n" % (kind, json.dumps(payload, separators=(",", ":"))))
        out.append(("".join(current).encode("utf-8"), 0))
        return out

    def encode(self):
        return b"".join(c for c, _ in self.chunks())

    def items(self):
        return [p["item"] for k, p in self.events if k == "response.output_item.done"]


def _split(text, chunks):
    """Splits text at spaces into at most `chunks` deterministic pieces."""
    words = text.split(" ")
    if chunks <= 1 or len(words) < 2:
        return [text]
    cut = max(1, len(words) // chunks)
    pieces, i = [], 0
    while i < len(words):
        j = len(words) if len(pieces) == chunks - 1 else min(len(words), i + cut)
        pieces.append(" ".join(words[i:j]) + (" " if j < len(words) else ""))
        i = j
    return pieces


# ---------------------------------------------------------------------------------------------
# Scenarios: each returns either ("sse", Stream) or ("http", status, body-dict)


def _declined(texts):
    joined = "\n".join(texts).lower()
    return any(w in joined for w in ("rejected", "declined", "denied", "not approved", "aborted"))


def _answers(texts):
    """The labels in request_user_input outputs ({"answers":{"<id>":{"answers":[...]}}})."""
    labels = []
    for text in texts:
        try:
            answers = json.loads(text).get("answers", {})
            for qid in sorted(answers):
                labels += answers[qid].get("answers", [])
        except (ValueError, AttributeError):
            labels.append(text.strip())
    return labels or ["nothing"]


def scenario_response(conv, turn_key, state):
    name = conv.scenario
    step = conv.step
    tag = "%s_t%d_s%d" % ((name or "aux").replace("-", ""), conv.turn_number, step)
    s = Stream(tag)

    if name is None:
        # Auxiliary call (or a conversation without a scenario): short canned answer.
        s.text("OK.", 1)
    elif name == "plain":
        s.text("Hello from the mock.")
    elif name == "tool-allow":
        if step == 0:
            s.function_call("exec_command", {"cmd": "echo hello > hello.txt"})
        else:
            s.text("Wrote hello.txt.")
    elif name == "deny-continue":
        if step == 0:
            s.function_call("exec_command", {"cmd": "rm -rf build"})
        elif _declined(conv.output_texts()):
            said = (" You said: " + conv.steers[-1]) if conv.steers else ""
            s.text("The command was declined, so I left build in place." + said)
        else:
            s.text("The command ran.")
    elif name == "session-accept":
        if FOLLOWUP_TOKEN in conv.last_prompt:
            # A later turn: the approved command again, then a different one.
            if step == 0:
                s.function_call("exec_command", {"cmd": "echo one >> log.txt"})
            elif step == 1:
                s.function_call("exec_command", {"cmd": "echo two >> log.txt"})
            else:
                s.text("Appended one and two.")
        elif step < 2:
            s.function_call("exec_command", {"cmd": "echo one >> log.txt"})
        else:
            s.text("Appended to log.txt twice.")
    elif name == "file-change":
        if FOLLOWUP_TOKEN in conv.last_prompt:
            # A later turn: a second patch, to the file added by the first.
            if step == 0:
                s.custom_call("apply_patch", PATCH_NOTES_UPDATE)
            elif _declined(conv.output_texts()):
                s.text("The second patch was declined.")
            else:
                s.text("Updated notes.txt.")
        elif step == 0:
            s.custom_call("apply_patch", PATCH_NOTES)
        elif _declined(conv.output_texts()):
            s.text("The patch was declined.")
        else:
            s.text("Added notes.txt.")
    elif name == "interrupt":
        if step == 0:
            s.function_call("exec_command", {"cmd": "sleep 30"})
        else:
            s.text("The sleep ended.")
    elif name == "followup":
        if FOLLOWUP_TOKEN in conv.last_prompt:
            s.text("second turn done")
        else:
            s.text("first turn done")
    elif name == "api-error" and FOLLOWUP_TOKEN in conv.last_prompt:
        s.text("Working again.")
    elif name == "api-error":
        return ("http", 400, {"error": {
            "message": "Mock API error: this model request is refused.",
            "type": "invalid_request_error", "param": None, "code": "mock_refused",
        }})
    elif name == "server-error":
        return ("http", 500, {"error": {"message": "Mock server error.", "type": "server_error", "code": None}})
    elif name == "stream-error":
        s.failed("server_error", "Mock stream failure.")
        return ("sse", s)
    elif name == "retry":
        with state["lock"]:
            seen = state["retry"].get(turn_key, 0)
            state["retry"][turn_key] = seen + 1
        if seen == 0:
            return ("http", 500, {"error": {"message": "Mock transient failure.", "type": "server_error", "code": None}})
        s.text("Recovered after a retry.")
    elif name == "sandbox-denied":
        if step == 0:
            s.function_call("exec_command", {"cmd": "sleep 0.5; echo probe > /var/tmp/nucleic-sandbox-probe.txt"})
        else:
            s.text("Writing outside the workspace was not allowed.")
    elif name == "sandbox-denied-fast":
        # As sandbox-denied but failing at once: Codex then often emits no commandExecution item.
        if step == 0:
            s.function_call("exec_command", {"cmd": "echo probe > /var/tmp/nucleic-sandbox-probe.txt"})
        else:
            s.text("Writing outside the workspace was not allowed.")
    elif name == "exec":
        # Free-form probe: runs the command given as [[cmd:...]] in the latest prompt.
        if step == 0 and conv.command:
            s.function_call("exec_command", {"cmd": conv.command})
        else:
            s.text("Ran it.")
    elif name == "exec-fail":
        if step == 0:
            s.function_call("exec_command", {"cmd": "ls /nonexistent-nucleic"})
        else:
            s.text("The listing failed.")
    elif name == "output-stream":
        if step == 0:
            s.function_call("exec_command", {"cmd": "sleep 0.5; for i in 1 2 3; do echo line$i; sleep 0.3; done"})
        else:
            s.text("Printed three lines.")
    elif name == "two-tools":
        if step == 0:
            s.function_call("exec_command", {"cmd": "sleep 0.5; echo a > a.txt"})
            s.pause(0.1)  # so that Codex asks about the first call first
            s.function_call("exec_command", {"cmd": "sleep 1.5; echo b > b.txt"})
        else:
            s.text("Wrote a.txt and b.txt.")
    elif name == "reasoning":
        s.usage = USAGE_REASONING
        s.reasoning("Thinking about the answer.")
        s.text("Reasoned answer.")
    elif name == "question":
        if step == 0:
            s.function_call("request_user_input", QUESTIONS)
        else:
            s.text("You chose: " + ", ".join(_answers(conv.output_texts())) + ".")
    else:
        s.text("Unknown scenario %s." % name)
    s.completed()
    return ("sse", s)


# ---------------------------------------------------------------------------------------------
# HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-openai/1"

    def log_message(self, fmt, *args):
        pass

    def _log(self, **fields):
        log = self.server.log_file
        if log is None:
            return
        entry = dict(method=self.command, path=self.path, **fields)
        with self.server.log_lock:
            log.write(json.dumps(entry, separators=(",", ":")) + "\n")
            log.flush()

    def _send(self, status, body, content_type="application/json"):
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw.decode("utf-8")) if raw else {}
        except ValueError:
            return None

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path.rstrip("/").endswith("/models"):
            self._log(status=200)
            self._send(200, {"object": "list", "data": [{"id": "gpt-5.5", "object": "model", "owned_by": "mock"}], "models": []})
        else:
            self._log(status=404)
            self._send(404, {"error": {"message": "not found", "type": "not_found"}})

    def do_POST(self):
        path = self.path.split("?", 1)[0]
        body = self._read_body()
        if body is None:
            self._log(status=400)
            self._send(400, {"error": {"message": "invalid JSON", "type": "invalid_request_error"}})
            return
        if not path.endswith("/responses"):
            self._log(status=404)
            self._send(404, {"error": {"message": "not found: " + path, "type": "not_found"}})
            return
        conv = Conversation(body)
        if self.server.dump_dir:
            with self.server.log_lock:
                self.server.dump_count += 1
                n = self.server.dump_count
            with open("%s/request-%03d.json" % (self.server.dump_dir, n), "w", encoding="utf-8") as f:
                json.dump({"path": self.path, "headers": dict(self.headers), "body": body}, f, indent=1)
        turn_key = _turn_key(self.headers)
        answer = scenario_response(conv, turn_key, self.server.state)
        if answer[0] == "http":
            _, status, payload = answer
            self._log(scenario=conv.scenario, step=conv.step, turn=conv.turn_number, status=status)
            self._send(status, payload)
            return
        stream = answer[1]
        self._log(scenario=conv.scenario, step=conv.step, turn=conv.turn_number, status=200,
                  items=[item.get("name") or item["type"] for item in stream.items()])
        if body.get("stream") is False:
            self._send(200, _non_streaming(stream))
            return
        chunks = stream.chunks()
        if len(chunks) == 1:
            self._send(200, chunks[0][0], "text/event-stream")
            return
        # A stream with pauses goes out chunked, flushed at every pause.
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for data, pause in chunks:
            if data:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            if pause:
                time.sleep(pause)
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _turn_key(headers):
    """Codex's turn id (from x-codex-turn-metadata), for the one stateful scenario."""
    meta = headers.get("x-codex-turn-metadata")
    if meta:
        try:
            return json.loads(meta).get("turn_id") or meta
        except ValueError:
            return meta
    return headers.get("x-client-request-id") or ""


def _non_streaming(stream):
    output = stream.items()
    return {"id": stream.rid, "object": "response", "status": "completed", "output": output, "usage": stream.usage}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default=None, help="append one JSON line per request to FILE")
    ap.add_argument("--dump", default=None, metavar="DIR", help="write every request (headers, body) to DIR")
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    server.log_file = open(args.log, "a", encoding="utf-8") if args.log else None
    server.log_lock = threading.Lock()
    server.dump_dir = args.dump
    server.dump_count = 0
    server.state = {"lock": threading.Lock(), "retry": {}}
    sys.stdout.write("PORT %d\n" % server.server_address[1])
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
