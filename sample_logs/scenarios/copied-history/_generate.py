"""Write the synthetic "copied-history" scenario: logs that carry another session's history, and
multi-agent shapes of recent Codex builds. Output (next to this script):

  codex/sessions/2026/02/03/rollout-*.jsonl    Codex rollouts
  gemini-cli/tmp/<projectHash>/chats/...        Gemini CLI chats (a sub-agent, a skill extraction)
  claude-code/projects/<projectKey>/...         Claude Code 2.1.19 transcripts (a plan hand-off)
  expected.json                                 what a correct ingest and inference find

What it holds (everything invented; shapes from shared/specs/harness-log-formats.md and the real
Codex 0.114 family in shared/real-families/, whose layout the fork replay follows):

- P: a Codex 0.114 parent that spawns two forked workers C1, C2 (``fork_context``). Each child
  rollout starts with its own session_meta, then P's session_meta and a replay of P's history up
  to the fork re-stamped at the fork time (P's calls, patches and token counts; C2's replay also
  holds the output naming C1), then its own first turn. Its own token totals go on from the last
  replayed total.
- Q: a Codex 0.144 parent (multi-agent v2) whose spawn_agent output only names a task path; a
  ``sub_agent_activity`` event ties the call to child R. wait_agent/send_input/close_agent are not
  spawns. Q and R hold the record types of those builds (world_state, thread_settings_applied,
  inter_agent_communication_metadata, tool_search_call ...). R's replay holds Q's messages and
  events only (no calls), and its own token counter starts again from zero.
- G: a Codex guardian sub-agent (``{"subagent": {"other": "guardian"}}``) that names no thread:
  it serves Q (same cwd, started while Q ran). V: a ``{"subagent": "review"}`` reviewer whose
  header names P in ``parent_thread_id``.
- S: a Gemini CLI chat whose ``save_memory`` call ran sub-agent M (its chat in S's chat folder,
  ``kind: subagent``), and X, a skill-extraction chat the CLI ran for S (a background helper).
- O -> N: a Claude Code 2.1.19 plan hand-off. N's file starts with a copy of every record of O
  (same uuids, sessionId rewritten), then the "Implement the following plan" prompt
  (parentUuid null) citing O's transcript path. O spawned a Task subagent whose file is present.

expected.json is this script's own bookkeeping of what it wrote (which lines are copies, what
each session itself spent and called), not the output of sessiongraph.
Python stdlib only, deterministic. Run: python sample_logs/scenarios/copied-history/_generate.py
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
KILN = "/home/dev/projects/kiln"
QUILL = "/home/dev/projects/quill"
PRICE_MODEL = "gpt-5.2-codex"


def T(hms: str) -> datetime:
    return datetime.strptime(f"2026-02-03T{hms}", "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def ms(dt: datetime, k: float) -> datetime:
    return dt + timedelta(milliseconds=k)


def _digest(label: str) -> bytes:
    return hashlib.sha256(("copied-history/" + label).encode()).digest()


def b62(label: str, n: int) -> str:
    return "".join(B62[b % 62] for b in (_digest(label) * 2)[:n])


def uid(label: str) -> str:
    h = bytearray(_digest(label)[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def uuid7(at: datetime, label: str) -> str:
    """A UUIDv7 whose time prefix is ``at`` (as Codex thread and turn ids are)."""
    t = f"{int(at.timestamp() * 1000):012x}"
    r = _digest(label).hex()
    return f"{t[:8]}-{t[8:]}-7{r[:3]}-{'89ab'[int(r[3], 16) % 4]}{r[4:7]}-{r[7:19]}"


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------
# Codex


class Rollout:
    """One rollout, and what this script knows about it: its own calls, writes and spend."""

    def __init__(self, name: str, start: datetime, cwd: str, cli: str, source, **meta):
        self.name, self.id, self.start, self.cwd, self.cli = name, uuid7(start, name), start, cwd, cli
        self.lines: list[dict] = []
        self.tot = dict(input_tokens=0, cached_input_tokens=0, output_tokens=0, reasoning_output_tokens=0,
                        total_tokens=0)
        self.spent = dict(input_tokens=0, cache_read_tokens=0, output_tokens=0, reasoning_tokens=0, rows=0)
        self.calls: list[str] = []
        self.spawns: list[str] = []
        self.writes: list[str] = []
        self.copied = 0
        self.meta = {"id": self.id, "timestamp": iso(start), "cwd": cwd, "originator": meta.pop("originator",
                     "codex_cli_rs"), "cli_version": cli, "source": source, "model_provider": "openai",
                     "base_instructions": {"text": "You are Codex, a coding agent."}, **meta}
        self.emit(ms(start, 30), "session_meta", self.meta)

    def emit(self, ts, kind, payload) -> dict:
        rec = {"timestamp": iso(ts), "type": kind, "payload": payload}
        self.lines.append(rec)
        return rec

    def event(self, ts, typ, **kw):
        return self.emit(ts, "event_msg", {"type": typ, **kw})

    def item(self, ts, typ, **kw):
        return self.emit(ts, "response_item", {"type": typ, **kw})

    def turn(self, ts, prompt: str, model: str = PRICE_MODEL) -> str:
        turn = uuid7(ts, f"{self.name}/turn/{iso(ts)}")
        self.event(ts, "task_started", turn_id=turn, model_context_window=258400, collaboration_mode_kind="default")
        self.emit(ms(ts, 1), "turn_context", {"turn_id": turn, "cwd": self.cwd, "approval_policy": "never",
                                               "sandbox_policy": {"type": "danger-full-access"}, "model": model,
                                               "summary": "none"})
        self.item(ms(ts, 2), "message", role="user", content=[{"type": "input_text", "text": prompt}])
        self.event(ms(ts, 3), "user_message", message=prompt, images=[])
        return turn

    def tokens(self, ts, inp, cached, out, rsn=0, *, restart=False):
        """A token_count whose last usage is this call's; totals go on from the file's running
        total (a forked child's from its parent's), or start again when ``restart``."""
        if restart:
            self.tot = {k: 0 for k in self.tot}
        last = dict(input_tokens=inp, cached_input_tokens=cached, output_tokens=out, reasoning_output_tokens=rsn,
                    total_tokens=inp + out)
        for k, v in last.items():
            self.tot[k] += v
        self.event(ts, "token_count", info={"total_token_usage": dict(self.tot), "last_token_usage": last,
                                            "model_context_window": 258400}, rate_limits=None)
        for k, v in (("input_tokens", inp - cached), ("cache_read_tokens", cached), ("output_tokens", out),
                     ("reasoning_tokens", rsn)):
            self.spent[k] += v
        self.spent["rows"] += 1

    def exec(self, ts, cmd: str) -> str:
        call = "call_" + b62(f"{self.name}/exec/{cmd}", 24)
        self.item(ts, "function_call", name="exec_command", arguments=dumps({"cmd": cmd, "workdir": self.cwd}),
                  call_id=call)
        self.item(ms(ts, 40), "function_call_output", call_id=call,
                  output=f"Chunk ID: 1a2b3c\nWall time: 0.0400 seconds\nProcess exited with code 0\nOutput:\nok\n")
        self.calls.append(call)
        return call

    def patch(self, ts, rel: str) -> str:
        call = "call_" + b62(f"{self.name}/patch/{rel}", 24)
        self.item(ts, "custom_tool_call", status="completed", call_id=call, name="apply_patch",
                  input=f"*** Begin Patch\n*** Add File: {rel}\n+generated\n*** End Patch\n")
        self.event(ms(ts, 20), "patch_apply_end", call_id=call, turn_id="", stdout="", stderr="", success=True,
                   changes={f"{self.cwd}/{rel}": {"type": "add", "content": "generated\n"}})
        self.item(ms(ts, 21), "custom_tool_call_output", call_id=call,
                  output=dumps({"output": f"Success. Updated the following files:\nA {rel}\n",
                                "metadata": {"exit_code": 0, "duration_seconds": 0.0}}))
        self.calls.append(call)
        self.writes.append(f"{self.cwd}/{rel}")
        return call

    def call(self, ts, name: str, args: dict, output, **extra) -> str:
        call = "call_" + b62(f"{self.name}/{name}/{iso(ts)}", 24)
        self.item(ts, "function_call", name=name, arguments=dumps(args), call_id=call, **extra)
        if output is not None:
            self.item(ms(ts, 30), "function_call_output", call_id=call, output=output)
        self.calls.append(call)
        if name == "spawn_agent":
            self.spawns.append(call)
        return call

    def fork_from(self, parent: Rollout, upto: int, at: datetime, events_only: bool = False) -> None:
        """The parent's session_meta and its records before ``upto``, re-stamped at ``at``."""
        replay = [parent.lines[0]] + parent.lines[1:upto]
        if events_only:  # late builds keep messages and events, not calls or reasoning
            replay = [r for r in replay if r["type"] != "response_item" or r["payload"]["type"] == "message"]
        for i, rec in enumerate(replay):
            rec = copy.deepcopy(rec)
            rec["timestamp"] = iso(ms(at, i // 40))
            self.lines.append(rec)
        self.copied += len(replay)
        # Baseline of the child's own totals: the last replayed cumulative count.
        counts = [r for r in replay if r["payload"].get("type") == "token_count"]
        if counts:
            self.tot = dict(counts[-1]["payload"]["info"]["total_token_usage"])

    def copy_tail(self, ts, records: list[tuple[str, str, dict]]) -> None:
        """Records a fork writes before the child's own first turn (they count as copied)."""
        for kind, typ, kw in records:
            if kind == "event_msg":
                self.event(ts, typ, **kw)
            elif kind == "response_item":
                self.item(ts, typ, **kw)
            else:
                self.emit(ts, kind, kw)
            self.copied += 1

    def write(self) -> Path:
        stamp = self.start.strftime("%Y-%m-%dT%H-%M-%S")
        path = HERE / "codex" / "sessions" / "2026" / "02" / "03" / f"rollout-{stamp}-{self.id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(dumps(r) + "\n" for r in self.lines))
        return path

    def expected(self) -> dict:
        return {"usage": dict(self.spent), "calls": sorted(self.calls), "spawn_calls": sorted(self.spawns),
                "writes": sorted(self.writes), "n_copied": self.copied}


SPAWNED_NOTE = ("You are the newly spawned agent. The prior conversation history was forked from your parent "
                "agent. Treat the next user message as your new task.")


def codex_fork_family() -> tuple[Rollout, list[Rollout], dict]:
    p = Rollout("P", T("09:00:00.000"), KILN, "0.114.0", "cli")
    p.turn(T("09:00:01.000"), "Plan the kiln refactor and split it into batches.")
    p.exec(T("09:00:05.000"), "sed -n 1,80p src/kiln/core.py")
    p.tokens(T("09:00:06.000"), 12000, 8000, 300, 120)
    p.patch(T("09:00:20.000"), "notes/plan.md")
    p.tokens(T("09:00:21.000"), 13500, 12000, 900, 200)
    tasks = {"C1": "Implement batch 1: src/kiln/a.py only.", "C2": "Implement batch 2: src/kiln/b.py only."}
    spawn_at = T("09:01:00.000")
    calls = {k: p.call(ms(spawn_at, i), "spawn_agent", {"agent_type": "worker", "fork_context": True,
                                                          "message": msg}, None)
             for i, (k, msg) in enumerate(tasks.items())}
    fork_upto = {"C1": len(p.lines)}  # C1 forks before P's count for the spawning turn is written
    p.tokens(ms(spawn_at, 5), 14100, 13400, 250, 40)
    kids = {}
    for i, name in enumerate(tasks):
        start = ms(spawn_at, 40 + 60 * i)
        kids[name] = Rollout(name, start, KILN, "0.114.0",
                             {"subagent": {"thread_spawn": {"parent_thread_id": p.id, "depth": 1,
                                                            "agent_nickname": f"Nick{name}", "agent_role": "worker"}}},
                             forked_from_id=p.id, agent_nickname=f"Nick{name}", agent_role="worker")
    fork_upto["C2"] = len(p.lines) + 1  # C2's replay also holds the output naming C1
    p.item(ms(spawn_at, 41), "function_call_output", call_id=calls["C1"],
           output=dumps({"agent_id": kids["C1"].id, "nickname": "NickC1"}))
    p.item(ms(spawn_at, 101), "function_call_output", call_id=calls["C2"],
           output=dumps({"agent_id": kids["C2"].id, "nickname": "NickC2"}))
    p.call(T("09:01:02.000"), "wait", {"ids": [kids["C1"].id, kids["C2"].id], "timeout_ms": 600000},
           dumps({"status": {}, "timed_out": False}))
    p.tokens(T("09:06:00.000"), 15000, 14000, 400, 90)
    p.event(T("09:06:01.000"), "task_complete", turn_id="", last_agent_message="done")
    for name, kid in kids.items():
        at = ms(kid.start, 40)
        kid.fork_from(p, fork_upto[name], at)
        kid.copy_tail(ms(at, 5), [
            ("response_item", "function_call_output", {"call_id": calls[name], "output": SPAWNED_NOTE}),
            ("response_item", "message", {"role": "developer", "content": [{"type": "input_text",
                                                                               "text": "<permissions instructions/>"}]}),
            ("response_item", "message", {"role": "user", "content": [{"type": "input_text",
                                                                          "text": "# AGENTS.md instructions"}]}),
        ])
        t0 = ms(kid.start, 700)
        kid.turn(t0, tasks[name])
        kid.exec(ms(t0, 3000), f"sed -n 1,40p src/kiln/{'a' if name == 'C1' else 'b'}.py")
        kid.tokens(ms(t0, 3500), 9000, 6000, 200, 50)
        kid.patch(ms(t0, 9000), f"src/kiln/{'a' if name == 'C1' else 'b'}.py")
        kid.tokens(ms(t0, 9500), 9800, 9000, 450, 80)
        kid.event(ms(t0, 10000), "task_complete", turn_id="", last_agent_message="batch done")
    return p, list(kids.values()), calls


def codex_v2_family() -> tuple[Rollout, Rollout, str]:
    q = Rollout("Q", T("10:00:00.000"), KILN, "0.144.0", "vscode", originator="Codex Desktop",
                thread_source="user", multi_agent_version="v2")
    q.event(T("10:00:00.100"), "thread_settings_applied", settings={"model": PRICE_MODEL})
    q.emit(T("10:00:00.200"), "world_state", {"open_files": [], "cwd": KILN})
    q.turn(T("10:00:01.000"), "Audit the API layer with a helper.")
    q.item(T("10:00:02.000"), "tool_search_call", call_id="ts_1", query="collaboration")
    q.item(T("10:00:02.100"), "tool_search_output", call_id="ts_1", tools=["spawn_agent", "wait_agent"])
    q.tokens(T("10:00:03.000"), 20000, 15000, 400, 100)
    fork_upto = len(q.lines)
    spawn_at = T("10:00:10.000")
    child = Rollout("R", ms(spawn_at, 50), KILN, "0.144.0",
                    {"subagent": {"thread_spawn": {"parent_thread_id": q.id, "depth": 1,
                                                   "agent_path": "/root/audit_api", "agent_role": None}}},
                    originator="Codex Desktop", forked_from_id=q.id, parent_thread_id=q.id,
                    thread_source="subagent", multi_agent_version="v2")
    spawn = q.call(spawn_at, "spawn_agent", {"task_name": "audit_api", "message": "gAAAAABencrypted" + b62("m", 40)},
                   dumps({"task_name": "/root/audit_api"}), namespace="collaboration")
    q.event(ms(spawn_at, 60), "sub_agent_activity", event_id=spawn, agent_thread_id=child.id,
            agent_path="/root/audit_api", kind="started")
    q.emit(ms(spawn_at, 70), "inter_agent_communication_metadata", {"from": "/root", "to": "/root/audit_api"})
    q.call(T("10:00:12.000"), "send_input", {"target": "/root/audit_api", "message": "focus on auth"},
           dumps({"submission_id": "s1"}), namespace="collaboration")
    q.event(T("10:00:12.100"), "collab_agent_interaction_end", call_id="", receiver_thread_id=child.id)
    q.call(T("10:00:13.000"), "wait_agent", {"targets": ["/root/audit_api"]}, dumps({"status": "completed"}),
           namespace="collaboration")
    q.call(T("10:05:00.000"), "close_agent", {"target": "/root/audit_api"}, dumps({"closed": True}),
           namespace="collaboration")
    q.item(T("10:05:01.000"), "agent_message", content=[{"type": "output_text", "text": "audit merged"}])
    q.event(T("10:05:01.100"), "mcp_tool_call_end", call_id="mcp_1", invocation={"server": "docs", "tool": "search"})
    q.event(T("10:05:01.200"), "item_completed", thread_id=q.id, turn_id="", item={"type": "Plan", "id": "p1"})
    q.event(T("10:05:01.300"), "guardian_assessment", id="g1", turn_id="", status="approved")
    q.event(T("10:05:01.400"), "thread_name_updated", thread_name="API audit")
    q.event(T("10:05:01.500"), "thread_rolled_back", num_turns=1)
    q.tokens(T("10:05:02.000"), 26000, 21000, 700, 150)
    # R: the parent's messages and events (no calls), then its own turn; its counter restarts.
    at = ms(child.start, 30)
    child.fork_from(q, fork_upto, at, events_only=True)
    # What the child writes before its own first turn counts as copied (the replay ends there).
    child.copy_tail(ms(at, 2), [("response_item", "message", {"role": "developer", "content": [
        {"type": "input_text", "text": "<multi_agent_v2 usage hint/>"}]})])
    child.copy_tail(ms(child.start, 400), [("event_msg", "thread_settings_applied", {"settings": {"model": PRICE_MODEL}})])
    t0 = ms(child.start, 500)
    child.turn(t0, "Audit src/kiln/api.py for auth checks.")
    child.exec(ms(t0, 2000), "rg -n auth src/kiln/api.py")
    child.tokens(ms(t0, 2500), 7000, 0, 150, 30, restart=True)
    child.tokens(ms(t0, 5000), 7600, 6800, 220, 60)
    child.event(ms(t0, 6000), "task_complete", turn_id="", last_agent_message="two gaps")
    return q, child, spawn


def codex_helpers(q: Rollout, p: Rollout) -> tuple[Rollout, Rollout]:
    g = Rollout("G", T("10:03:00.000"), KILN, "0.144.0", {"subagent": {"other": "guardian"}},
                originator="Codex Desktop")
    g.turn(T("10:03:00.500"), "Assess the planned action: rm -rf build/")
    g.tokens(T("10:03:02.000"), 3000, 0, 80, 40)
    g.event(T("10:03:02.100"), "task_complete", turn_id="", last_agent_message='{"risk_level":"low"}')
    v = Rollout("V", T("09:05:00.000"), KILN, "0.114.0", {"subagent": "review"}, parent_thread_id=p.id)
    v.turn(T("09:05:00.500"), "Review the current changes.")
    v.exec(T("09:05:02.000"), "git diff --stat")
    v.tokens(T("09:05:03.000"), 5000, 2000, 300, 100)
    v.event(T("09:05:03.100"), "exited_review_mode", review_output=None)
    return g, v


# ---------------------------------------------------------------------------------------------
# Claude Code 2.1.19 plan hand-off


class Claude:
    MODEL = "claude-opus-4-5-20251101"

    def __init__(self, sid: str, cwd: str, slug: str, *, agent: str | None = None):
        self.sid, self.cwd, self.slug, self.agent = sid, cwd, slug, agent
        self.lines: list[dict] = []
        self.last: str | None = None
        self.n = 0
        self.spent = dict(input_tokens=0, cache_read_tokens=0, output_tokens=0, cache_creation_tokens=0, rows=0)
        self.calls: list[str] = []
        self.spawns: list[str] = []

    def _rec(self, ts, typ: str, **kw) -> dict:
        self.n += 1
        u = uid(f"{self.sid}/{self.agent}/{self.n}")
        rec = {"parentUuid": self.last, "isSidechain": self.agent is not None, "userType": "external",
               "cwd": self.cwd, "sessionId": self.sid, "version": "2.1.19", "gitBranch": "main"}
        if self.agent:
            rec["agentId"] = self.agent
        if self.last is not None:
            rec["slug"] = self.slug
        rec.update(type=typ, **kw, uuid=u, timestamp=iso(ts))
        self.lines.append(rec)
        self.last = u
        return rec

    def prompt(self, ts, text: str, **kw) -> dict:
        return self._rec(ts, "user", message={"role": "user", "content": text}, **kw)

    def tool(self, ts, name: str, inp: dict, usage: tuple[int, int, int, int]) -> str:
        tid = "toolu_01" + b62(f"{self.sid}/{self.agent}/{name}/{iso(ts)}", 22)
        inp_t, out, read, create = usage
        self._rec(ts, "assistant", requestId="req_011C" + b62(f"{self.sid}/{iso(ts)}", 20), message={
            "model": self.MODEL, "id": "msg_01" + b62(f"{self.sid}/{self.agent}/msg/{iso(ts)}", 22),
            "type": "message", "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}], "stop_reason": "tool_use",
            "usage": {"input_tokens": inp_t, "output_tokens": out, "cache_read_input_tokens": read,
                      "cache_creation_input_tokens": create,
                      "cache_creation": {"ephemeral_5m_input_tokens": create, "ephemeral_1h_input_tokens": 0}}})
        for k, v in (("input_tokens", inp_t), ("output_tokens", out), ("cache_read_tokens", read),
                     ("cache_creation_tokens", create)):
            self.spent[k] += v
        self.spent["rows"] += 1
        self.calls.append(tid)
        if name == "Task":
            self.spawns.append(tid)
        return tid

    def result(self, ts, tid: str, text: str, tur: dict | None = None) -> None:
        kw = {"toolUseResult": tur} if tur is not None else {}
        self._rec(ts, "user", message={"role": "user", "content": [
            {"tool_use_id": tid, "type": "tool_result", "content": text, "is_error": False}]}, **kw)

    def path(self) -> Path:
        key = re.sub(r"[^A-Za-z0-9]", "-", self.cwd)
        base = HERE / "claude-code" / "projects" / key
        if self.agent:
            return base / self.sid / "subagents" / f"agent-{self.agent}.jsonl"
        return base / f"{self.sid}.jsonl"

    def write(self) -> Path:
        path = self.path()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(dumps(r) + "\n" for r in self.lines))
        return path

    def expected(self) -> dict:
        return {"usage": dict(self.spent), "calls": sorted(self.calls), "spawn_calls": sorted(self.spawns)}


def claude_hand_off() -> tuple[Claude, Claude, Claude, str]:
    o_id, n_id, agent = uid("O"), uid("N"), "a3f9c21"
    slug = "quiet-copper-lantern"
    o = Claude(o_id, QUILL, slug)
    o.prompt(T("11:00:00.000"), "Plan how to add an export command to quill.")
    task = o.tool(T("11:00:05.000"), "Task", {"description": "Survey exporters", "subagent_type": "Explore",
                                              "prompt": "List the exporters in src/quill."}, (10, 120, 9000, 1500))
    sub = Claude(o_id, QUILL, slug, agent=agent)
    sub.prompt(T("11:00:05.500"), "List the exporters in src/quill.")
    g = sub.tool(T("11:00:07.000"), "Glob", {"pattern": "src/quill/export*.py"}, (8, 40, 3000, 200))
    sub.result(T("11:00:07.200"), g, "src/quill/export_csv.py")
    o.result(T("11:00:20.000"), task, f"One exporter: export_csv.\nagentId: {agent} (for resuming)",
             {"status": "completed", "agentId": agent, "totalTokens": 4000})
    w = o.tool(T("11:00:30.000"), "Write", {"file_path": f"{QUILL}/docs/plan.md", "content": "# Plan\n"},
               (6, 400, 10500, 800))
    o.result(T("11:00:30.300"), w, f"File created successfully at: {QUILL}/docs/plan.md")
    e = o.tool(T("11:00:40.000"), "ExitPlanMode", {"plan": "# Plan\nAdd `quill export`."}, (4, 90, 11300, 300))
    o.result(T("11:00:55.000"), e, "User has approved your plan.")
    # N: every record of O with the sessionId rewritten, then the hand-off prompt.
    n = Claude(n_id, QUILL, slug)
    for rec in o.lines:
        rec = copy.deepcopy(rec)
        rec["sessionId"] = n_id
        n.lines.append(rec)
    n.last = None
    cite = f"/home/dev/.claude/projects/-home-dev-projects-quill/{o_id}.jsonl"
    n.prompt(T("11:01:00.000"), "Implement the following plan:\n\n# Plan\nAdd `quill export`.\n\nIf you need specific "
             "details from before exiting plan mode (like exact code snippets, error messages, or content you "
             f"generated), read the full transcript at: {cite}", planContent="# Plan\nAdd `quill export`.")
    r = n.tool(T("11:01:04.000"), "Read", {"file_path": f"{QUILL}/docs/plan.md"}, (5, 60, 12000, 900))
    n.result(T("11:01:04.100"), r, "     1→# Plan", {"type": "text", "file": {"filePath": f"{QUILL}/docs/plan.md",
                                                                          "content": "# Plan\n", "numLines": 1}})
    ed = n.tool(T("11:01:10.000"), "Edit", {"file_path": f"{QUILL}/src/quill/cli.py", "old_string": "a",
                                            "new_string": "b"}, (3, 210, 12900, 400))
    n.result(T("11:01:10.400"), ed, f"The file {QUILL}/src/quill/cli.py has been updated.")
    return o, n, sub, agent


# ---------------------------------------------------------------------------------------------
# Gemini CLI sub-agent chats


GEMINI_MODEL = "gemini-2.5-pro"


class GeminiChat:
    def __init__(self, name: str, sid: str, start: datetime, folder: str, kind: str | None):
        self.name, self.sid, self.folder = name, sid, folder
        self.project = hashlib.sha256(KILN.encode()).hexdigest()
        header = {"sessionId": sid, "projectHash": self.project, "startTime": iso(start), "lastUpdated": iso(start)}
        if kind:
            header["kind"] = kind
        self.lines: list[dict] = [header]
        self.spent = dict(input_tokens=0, cache_read_tokens=0, output_tokens=0, reasoning_tokens=0, rows=0)
        self.calls: list[str] = []
        self.spawns: list[str] = []

    def user(self, ts, text: str) -> None:
        self.lines.append({"id": b62(f"{self.name}/u/{iso(ts)}", 8), "timestamp": iso(ts), "type": "user",
                           "content": [{"text": text}]})

    def gemini(self, ts, tokens: tuple[int, int, int, int], calls: list[dict] | None = None) -> None:
        inp, out, cached, thoughts = tokens
        msg = {"id": b62(f"{self.name}/g/{iso(ts)}", 8), "timestamp": iso(ts), "type": "gemini", "content": "",
               "model": GEMINI_MODEL, "tokens": {"input": inp, "output": out, "cached": cached, "thoughts": thoughts,
                                                 "tool": 0, "total": inp + out + thoughts}}
        if calls:
            msg["toolCalls"] = calls
        self.lines.append(msg)
        for k, v in (("input_tokens", inp - cached), ("cache_read_tokens", cached),
                     ("output_tokens", out + thoughts), ("reasoning_tokens", thoughts)):
            self.spent[k] += v
        self.spent["rows"] += 1

    def tool(self, ts, done: datetime, name: str, args: dict, output: str, *, spawn: bool = False) -> dict:
        call_id = f"{name}-{int(ts.timestamp() * 1000)}-{b62(self.name + name, 12)}"
        self.calls.append(call_id)
        if spawn:
            self.spawns.append(call_id)
        return {"id": call_id, "name": name, "args": args, "status": "success", "timestamp": iso(done),
                "result": [{"functionResponse": {"id": call_id, "name": name, "response": {"output": output}}}]}

    def write(self) -> Path:
        base = HERE / "gemini-cli" / "tmp" / self.project / "chats"
        path = base / (self.folder or "") / f"{self.name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(dumps(r) + "\n" for r in self.lines))
        return path

    def expected(self) -> dict:
        return {"usage": dict(self.spent), "calls": sorted(self.calls), "spawn_calls": sorted(self.spawns)}


def gemini_sub_agents() -> tuple[GeminiChat, GeminiChat, GeminiChat, str]:
    s_id, m_id, x_id = uid("S"), uid("M"), uid("X")
    s = GeminiChat("session-2026-02-03T12-00-" + s_id[:8], s_id, T("12:00:00.000"), "", "main")
    s.user(T("12:00:01.000"), "Remember that kiln uses tabs, then add a CHANGES entry.")
    t0, t1 = T("12:00:03.000"), T("12:00:09.000")
    spawn = s.tool(t0, t1, "save_memory", {"fact": "kiln uses tabs"},
                   "Subagent 'save_memory' finished.\nTermination Reason: GOAL\nResult:\nSaved one fact.", spawn=True)
    s.gemini(ms(t0, -500), (8000, 40, 2000, 60), [spawn])
    w = s.tool(T("12:00:12.000"), T("12:00:12.300"), "write_file",
               {"file_path": f"{KILN}/CHANGES.md", "content": "- tabs\n"}, "Successfully wrote to CHANGES.md")
    s.gemini(T("12:00:11.000"), (8400, 30, 8000, 20), [w])
    # The sub-agent's own chat, in the parent's chat folder, started while save_memory ran.
    m = GeminiChat(m_id, m_id, ms(t0, 400), s_id, "subagent")
    m.user(ms(t0, 500), "Save this fact to memory: kiln uses tabs")
    m.gemini(ms(t0, 3000), (2100, 25, 0, 40))
    # A background skill extraction the CLI ran for the session.
    x = GeminiChat("session-2026-02-03T12-05-" + x_id[:8], x_id, T("12:05:00.000"), f"skill-extraction-{s_id}", None)
    x.user(T("12:05:00.100"), "Extract reusable skills from the session transcript.")
    x.gemini(T("12:05:04.000"), (5000, 120, 0, 0))
    return s, m, x, s.spawns[0]


# ---------------------------------------------------------------------------------------------


def main() -> None:
    for sub in ("codex", "claude-code", "gemini-cli"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    p, kids, spawn_calls = codex_fork_family()
    q, r, q_spawn = codex_v2_family()
    g, v = codex_helpers(q, p)
    o, n, sub, agent = claude_hand_off()
    gs, gm, gx, g_spawn = gemini_sub_agents()
    for x in (p, *kids, q, r, g, v, o, n, sub, gs, gm, gx):
        x.write()
    sid = {x.name: f"codex:{x.id}" for x in (p, *kids, q, r, g, v)}
    sid.update(O=f"claude-code:{o.sid}", N=f"claude-code:{n.sid}", O_sub=f"claude-code:{o.sid}/{agent}")
    sessions = {x.name: x.expected() for x in (p, *kids, q, r, g, v)}
    sessions["O"], sessions["N"], sessions["O_sub"] = o.expected(), n.expected(), sub.expected()
    sid.update(S=f"gemini-cli:{gs.sid}", M=f"gemini-cli:{gm.sid}", X=f"gemini-cli:{gx.sid}")
    sessions["S"], sessions["M"], sessions["X"] = gs.expected(), gm.expected(), gx.expected()
    sessions["O"]["n_copied"], sessions["N"]["n_copied"] = 0, len(o.lines)
    sessions["O"]["writes"], sessions["N"]["writes"] = [f"{QUILL}/docs/plan.md"], [f"{QUILL}/src/quill/cli.py"]
    expected = {
        "about": "Written by _generate.py from what it wrote: each session's own usage (token_count "
                 "increments / message usage it emitted outside copies), calls and writes; the edges a correct "
                 "inference finds. usage: input_tokens is uncached input.",
        "sessions": sid,
        "per_session": sessions,
        "edges": [
            {"kind": "spawn", "src": sid["P"], "dst": sid["C1"], "tier": "verified", "src_call_id": spawn_calls["C1"]},
            {"kind": "spawn", "src": sid["P"], "dst": sid["C2"], "tier": "verified", "src_call_id": spawn_calls["C2"]},
            {"kind": "fork", "src": sid["P"], "dst": sid["C1"], "tier": "verified"},
            {"kind": "fork", "src": sid["P"], "dst": sid["C2"], "tier": "verified"},
            {"kind": "spawn", "src": sid["Q"], "dst": sid["R"], "tier": "verified", "src_call_id": q_spawn},
            {"kind": "fork", "src": sid["Q"], "dst": sid["R"], "tier": "verified"},
            {"kind": "spawn", "src": sid["O"], "dst": sid["O_sub"], "tier": "verified", "src_call_id": o.spawns[0]},
            {"kind": "continue", "src": sid["O"], "dst": sid["N"], "tier": "verified"},
            {"kind": "artifact", "src": sid["O"], "dst": sid["N"], "tier": "verified"},
            {"kind": "spawn", "src": sid["S"], "dst": sid["M"], "tier": "heuristic", "src_call_id": g_spawn},
        ],
        "runs": {  # members of each run by root, with the role of the helpers
            sid["P"]: {"members": sorted([sid["P"], sid["C1"], sid["C2"], sid["V"]]),
                       "helpers": {sid["V"]: {"via": "review", "role": "reviewer", "tie": "verified"}}},
            sid["Q"]: {"members": sorted([sid["Q"], sid["R"], sid["G"]]),
                       "helpers": {sid["G"]: {"via": "guardian", "role": "reviewer", "tie": "heuristic"}}},
            sid["S"]: {"members": sorted([sid["S"], sid["M"], sid["X"]]),
                       "helpers": {sid["X"]: {"via": "helper", "role": "worker", "tie": "heuristic"}}},
        },
        "agent_types": {sid["R"]: "/root/audit_api", sid["C1"]: "worker", sid["C2"]: "worker"},
        "dangling_spawns": [],
        "orphan_children": [],
    }
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
