"""A scripted Agent Client Protocol agent on the ACP Python SDK, for the protocol's edges.

Each prompt picks a scenario with a `[[scenario:NAME]]` token (default `updates`):
  updates    every session/update kind, then end_turn with usage
  permission a tool call that asks permission; on allow it writes a.txt through fs/write_text_file
  outside    asks the client to read a path outside the worktree (/etc/hostname) and reports the answer
  terminal   terminal/create of `echo hi`, then output, wait_for_exit, release
  forever    terminal/create of a command that never exits, waits for it until cancelled
  direct     writes b.txt through fs/write_text_file without asking permission first
  runwrite   terminal/create of `sh -c 'echo made > made.txt'` (a write the host judges), waits for it
  late       terminal/create of a command that sleeps 3 s, prints `late` and appends `ran` to runs.txt
             (a write the host judges); waits for it, reads its output, says both
  malformed  writes a line that is not JSON to stdout, then ends the turn
  error      fails the prompt with a JSON-RPC internal error
  slow       streams a chunk, then waits until cancelled
Run: python3 acp_reference_agent.py (stdio).
"""

import asyncio
import re
import sys
import uuid

import acp
from acp import schema
from acp import helpers as h


class ReferenceAgent:
    def __init__(self):
        self.conn = None
        self.sessions = {}
        self.cancelled = {}

    def on_connect(self, conn):
        self.conn = conn

    async def initialize(self, protocol_version, client_capabilities=None, client_info=None, **kwargs):
        return schema.InitializeResponse(
            protocol_version=1,
            agent_capabilities=schema.AgentCapabilities(load_session=True),
            auth_methods=[],
        )

    def _modes(self):
        return schema.SessionModeState(
            current_mode_id="default",
            available_modes=[schema.SessionMode(id="default", name="Default"), schema.SessionMode(id="plan", name="Plan")],
        )

    async def new_session(self, cwd, mcp_servers=None, **kwargs):
        sid = "ref-" + uuid.uuid4().hex[:8]
        self.sessions[sid] = cwd
        return schema.NewSessionResponse(session_id=sid, modes=self._modes())

    async def load_session(self, cwd, session_id, mcp_servers=None, **kwargs):
        self.sessions[session_id] = cwd
        await self._send(session_id, h.update_user_message_text("earlier prompt"))
        await self._send(session_id, h.update_agent_message_text("earlier answer"))
        return schema.LoadSessionResponse(modes=self._modes())

    async def set_session_mode(self, session_id, mode_id, **kwargs):
        await self._send(session_id, h.update_current_mode(mode_id))
        return schema.SetSessionModeResponse()

    async def authenticate(self, method_id, **kwargs):
        return None

    async def cancel(self, session_id, **kwargs):
        event = self.cancelled.get(session_id)
        if event:
            event.set()

    async def _send(self, sid, update):
        await self.conn.session_update(session_id=sid, update=update)

    async def prompt(self, session_id, prompt, **kwargs):
        text = " ".join(getattr(b, "text", "") for b in prompt)
        m = re.search(r"\[\[scenario:([a-z]+)\]\]", text)
        scenario = m.group(1) if m else "updates"
        cwd = self.sessions.get(session_id, ".")
        cancelled = asyncio.Event()
        self.cancelled[session_id] = cancelled
        sid = session_id
        if scenario == "updates":
            await self._send(sid, h.update_agent_thought_text("thinking"))
            await self._send(sid, h.update_agent_message_text("Hello "))
            await self._send(sid, h.update_agent_message_text("world."))
            await self._send(sid, h.update_plan([h.plan_entry("look", priority="high", status="completed"), h.plan_entry("fix", priority="medium", status="pending")]))
            await self._send(sid, h.update_available_commands([schema.AvailableCommand(name="init", description="set up")]))
            await self._send(sid, h.update_current_mode("plan"))
            await self._send(sid, h.start_tool_call("t1", "List files", kind="execute", status="pending",
                                                    locations=[schema.ToolCallLocation(path=cwd)], raw_input={"command": "ls"}))
            await self._send(sid, h.update_tool_call("t1", status="in_progress", content=[h.tool_content(h.text_block("a.txt"))]))
            await self._send(sid, h.update_tool_call("t1", status="completed"))
            await self._send(sid, schema.UsageUpdate(session_update="usage_update", used=1200, size=200000))
            await self.conn.ext_notification("reference/odd", {"x": 1})
            return schema.PromptResponse(stop_reason="end_turn", usage=schema.Usage(input_tokens=10, output_tokens=5, total_tokens=15))
        if scenario == "permission":
            path = cwd + "/a.txt"
            await self._send(sid, h.start_edit_tool_call("t2", "Write a.txt", path, "hi\n"))
            answer = await self.conn.request_permission(
                session_id=sid,
                tool_call=h.update_tool_call("t2", title="Write a.txt", kind="edit", raw_input={"path": path}),
                options=[
                    schema.PermissionOption(option_id="once", name="Allow", kind="allow_once"),
                    schema.PermissionOption(option_id="always", name="Always", kind="allow_always"),
                    schema.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                ],
            )
            outcome = answer.outcome
            if getattr(outcome, "option_id", None) in ("once", "always"):
                await self.conn.write_text_file(session_id=sid, path=path, content="hi\n")
                await self._send(sid, h.update_tool_call("t2", status="completed"))
                await self._send(sid, h.update_agent_message_text("wrote a.txt"))
            else:
                await self._send(sid, h.update_tool_call("t2", status="failed"))
                await self._send(sid, h.update_agent_message_text("not allowed"))
            return schema.PromptResponse(stop_reason="cancelled" if outcome.outcome == "cancelled" else "end_turn")
        if scenario == "outside":
            try:
                got = await self.conn.read_text_file(session_id=sid, path="/etc/hostname")
                await self._send(sid, h.update_agent_message_text("read: " + got.content))
            except acp.RequestError as e:
                await self._send(sid, h.update_agent_message_text("refused: " + str(e)))
            return schema.PromptResponse(stop_reason="end_turn")
        if scenario in ("terminal", "forever"):
            command, args = ("sh", ["-c", "echo hi"]) if scenario == "terminal" else ("sleep", ["1000000"])
            term = await self.conn.create_terminal(session_id=sid, command=command, args=args, cwd=cwd, output_byte_limit=4096)
            tid = term.terminal_id
            await self._send(sid, h.start_tool_call("t3", f"Run {command}", kind="execute", status="in_progress", content=[h.tool_terminal_ref(tid)]))
            waiting = asyncio.ensure_future(self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=tid))
            stop = asyncio.ensure_future(cancelled.wait())
            done, _ = await asyncio.wait({waiting, stop}, return_when=asyncio.FIRST_COMPLETED)
            if stop in done:
                await self.conn.kill_terminal(session_id=sid, terminal_id=tid)
                await self.conn.release_terminal(session_id=sid, terminal_id=tid)
                return schema.PromptResponse(stop_reason="cancelled")
            out = await self.conn.terminal_output(session_id=sid, terminal_id=tid)
            await self.conn.release_terminal(session_id=sid, terminal_id=tid)
            await self._send(sid, h.update_tool_call("t3", status="completed", content=[h.tool_content(h.text_block(out.output))]))
            return schema.PromptResponse(stop_reason="end_turn")
        if scenario == "direct":
            try:
                await self.conn.write_text_file(session_id=sid, path=cwd + "/b.txt", content="direct\n")
                await self._send(sid, h.update_agent_message_text("wrote b.txt"))
            except acp.RequestError as e:
                await self._send(sid, h.update_agent_message_text("refused: " + str(e)))
            return schema.PromptResponse(stop_reason="end_turn")
        if scenario == "runwrite":
            try:
                term = await self.conn.create_terminal(session_id=sid, command="sh", args=["-c", "echo made > made.txt"], cwd=cwd)
            except acp.RequestError as e:
                await self._send(sid, h.update_agent_message_text("refused: " + str(e)))
                return schema.PromptResponse(stop_reason="end_turn")
            done = await self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=term.terminal_id)
            await self.conn.release_terminal(session_id=sid, terminal_id=term.terminal_id)
            await self._send(sid, h.update_agent_message_text(f"exit {done.exit_code}"))
            return schema.PromptResponse(stop_reason="end_turn")
        if scenario == "late":
            term = await self.conn.create_terminal(session_id=sid, command="sh", args=["-c", "sleep 3; echo late; echo ran >> runs.txt"], cwd=cwd)
            done = await self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=term.terminal_id)
            out = await self.conn.terminal_output(session_id=sid, terminal_id=term.terminal_id)
            await self.conn.release_terminal(session_id=sid, terminal_id=term.terminal_id)
            await self._send(sid, h.update_agent_message_text(f"exit {done.exit_code}: {out.output.strip()}"))
            return schema.PromptResponse(stop_reason="end_turn")
        if scenario == "malformed":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            return schema.PromptResponse(stop_reason="end_turn")
        if scenario == "error":
            raise acp.RequestError.internal_error({"reason": "scripted failure"})
        if scenario == "slow":
            await self._send(sid, h.update_agent_message_text("working"))
            await cancelled.wait()
            return schema.PromptResponse(stop_reason="cancelled")
        raise acp.RequestError.invalid_params({"scenario": scenario})


if __name__ == "__main__":
    asyncio.run(acp.run_agent(ReferenceAgent()))
