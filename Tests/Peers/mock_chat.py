"""A scripted OpenAI-compatible chat-completions API on 127.0.0.1, for agents that speak it
(Mistral Vibe's `vibe-acp` with an `openai`-style provider).

Stateless: each request's scenario is the `[[scenario:NAME]]` token of its last user message, and
its step is the number of tool results after that message. Responses stream as server-sent events
(`chat.completion.chunk`), one write each, with fixed ids and usage.

Scenarios:
  plain     text
  think     reasoning (`reasoning_content` deltas), then text
  write     calls write_file(<cwd>/hello.txt, "hello\\n"), then text
  bash      calls bash("echo hi > out.txt"), then text
  error     HTTP 400 (an invalid request: clients do not retry it)
  slow      a first chunk, then waits 30 s before the rest (for cancels)
Run: python3 mock_chat.py --port 0 [--log FILE]; prints "PORT <n>" once it listens.
"""
import argparse
import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG = None


def log(entry):
    if LOG:
        with open(LOG, "a") as f:
            f.write(json.dumps(entry) + "\n")


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def plan(messages):
    """(scenario, step, turn, cwd) of a request."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    text = text_of(messages[last_user]["content"]) if last_user >= 0 else ""
    m = re.search(r"\[\[scenario:([a-z-]+)\]\]", text)
    scenario = m.group(1) if m else "plain"
    step = sum(1 for m in messages[last_user + 1:] if m.get("role") == "tool")
    turn = sum(1 for m in messages if m.get("role") == "user")
    everything = " ".join(text_of(m.get("content")) for m in messages)
    # Vibe's system prompt names its folder ("Absolute path: /…").
    cwd = re.search(r"Absolute path: (/\S+)", everything)
    return scenario, step, turn, cwd.group(1) if cwd else None


def chunk(delta, finish=None, usage=None):
    body = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 1767225600, "model": "mock-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage:
        body["usage"] = usage
    return "data: " + json.dumps(body) + "\n\n"


USAGE = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}


def text_reply(text):
    return [chunk({"role": "assistant", "content": text}), chunk({}, "stop", USAGE)]


def tool_reply(call_id, name, arguments):
    return [chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": call_id, "type": "function",
                                                        "function": {"name": name, "arguments": json.dumps(arguments)}}]}),
            chunk({}, "tool_calls", USAGE)]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        body = json.dumps({"object": "list", "data": [{"id": "mock-model", "object": "model"}]}).encode()
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        messages = request.get("messages", [])
        # Tool call ids are unique per turn: Vibe refuses an id it has seen (its effect ids derive from them).
        scenario, step, turn, cwd = plan(messages)
        tool_results = [text_of(m.get("content")) for m in messages if m.get("role") == "tool"]
        log({"path": self.path, "scenario": scenario, "step": step, "toolResults": tool_results[-1:]})
        if scenario == "error":
            body = json.dumps({"error": {"message": "scripted failure", "type": "invalid_request_error"}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if scenario == "write" and step == 0:
            events = tool_reply(f"call_write_t{turn}", "write_file", {"path": f"{cwd or '.'}/hello.txt", "content": "hello\n"})
        elif scenario == "bash" and step == 0:
            events = tool_reply(f"call_bash_t{turn}", "bash", {"command": "echo hi > out.txt"})
        elif scenario in ("write", "bash"):
            events = text_reply(f"done with {scenario}")
        elif scenario == "think":
            events = [chunk({"role": "assistant", "reasoning_content": "pondering the mock"}),
                      chunk({"content": "Hello after thinking."}), chunk({}, "stop", USAGE)]
        elif scenario == "slow":
            events = None
        else:
            events = text_reply("Hello from the mock.")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        try:
            if events is None:
                self.wfile.write(chunk({"role": "assistant", "content": "working"}).encode())
                self.wfile.flush()
                time.sleep(30)
                events = [chunk({}, "stop", USAGE)]
            self.wfile.write(("".join(events) + "data: [DONE]\n\n").encode())
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    global LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log")
    args = ap.parse_args()
    LOG = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
