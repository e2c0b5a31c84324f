"""Write the synthetic "lineage-wild" logs (issue 14): files without ids, launches through workspace
scripts, backgrounded and looped launches, inline sidechains keyed by agent id, events without a
valid time, and the distractors each class needs. The story and the expected edges are in
EXPECTED.md / expected.json, written by hand from this story (not from sessiongraph's output).

  claude-code/projects/<projectKey>/<id>.jsonl           Claude Code transcripts
  codex/sessions/2026/02/10/rollout-<UTC time>-<id>.jsonl Codex rollouts (filename time in UTC)
  projects/wild/tools/*.sh, projects/outside/ext.sh      the workspace's scripts (and one outside it)

The logs name the workspace /home/dev/projects/wild. A launch through a script is only found
when the script exists on the machine doing the ingest, so tests copy this folder and replace
/home/dev/projects with the copied projects/ folder (tests/test_lineage_wild.py).

Everything is invented; shapes follow shared/specs/harness-log-formats.md and the launch-lamp
scenario. Python stdlib only, deterministic. Run: python sample_logs/scenarios/lineage-wild/_generate.py
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
DAY = "2026-02-10"
WILD = "/home/dev/projects/wild"
ELSEWHERE = "/home/dev/projects/elsewhere"
MODEL = "claude-opus-4-5-20251101"

# Claude session ids (L: script-launching lead, C1: exported without ids, S: snapshot stub,
# P: lead whose file holds inline sidechains)
S_L = "5b0e7c21-3f4a-4d6b-9e82-1a7c9d3f0b64"
S_C1 = "8e2f4a6c-0b1d-4c3e-a5f7-9d8b6e4c2a10"
S_S = "c4a9e1f7-6d2b-4a8c-b3e5-0f7d1c9a5e26"
S_P = "2d7b5f93-8c1e-4a6d-b0f4-e3a9c7d15b82"
AGENT_A, AGENT_B = "a1f2e3d4", "b5c6d7e8"

# Codex thread ids (UUIDv7 whose first 48 bits are the start in ms), by name
CODEX = {
    "C2": ("09:10:00.000", "019c46d0-9240-7a11-8c3d-2e4f6a8b0c12"),  # no session_meta at all
    "C3": ("09:20:00.000", "019c46d9-ba00-7b22-9d4e-3f5a7b9c1d23"),  # session_meta late in the file
    "R1": ("10:00:05.000", "019c46fe-6c88-7c33-ae5f-4a6b8c0d2e34"),  # true child of (a) via review.sh
    "D2": ("10:00:50.000", "019c46ff-1c50-7d44-bf60-5b7c9d1e3f45"),  # starts after sync (a) returned
    "R3A": ("10:10:05.000", "019c4707-9448-7e55-8071-6c8d0e2f4056"),  # child of loop (c), T3
    "D3": ("10:10:10.000", "019c4707-a7d0-7f66-9182-7d9e1f305167"),  # interactive TUI inside loop (c)
    "R3B": ("10:10:35.000", "019c4708-0978-7077-a293-8eaf20416278"),  # child of loop (c), T4
    "D1": ("10:15:01.000", "019c470c-1888-7188-b3a4-9fb031527389"),  # starts during `grep` (d)
    "D4": ("10:17:05.000", "019c470d-fce8-7299-84b5-a0c14263849a"),  # during (f): the script lies outside
    "X1": ("10:30:10.000", "019c4719-f750-73aa-95c6-b1d25374950b"),  # elsewhere, closer to (b)
    "O1": ("10:40:03.000", "019c4723-03b8-74bb-a6d7-c2e36485a61c"),  # child of `omx exec` (h)
    "R2": ("10:40:20.000", "019c4723-4620-75cc-b7e8-d3f47596b72d"),  # child of backgrounded (b)
    "N1": ("10:50:05.000", "019c472c-3348-76dd-88f9-e4058607c83e"),  # during (i), whose call has no time
}
GIT = {
    "commit_hash": "4c1d7e9a2b6f03d58e1a9c4b7f2d60e3a5c8b179",
    "branch": "main",
    "repository_url": "git@github.com:dev/wild.git",
}


def T(hms: str) -> datetime:
    return datetime.strptime(f"{DAY}T{hms}", "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def ms(t: datetime, n: int) -> datetime:
    return t + timedelta(milliseconds=n)


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def cusage(inp: int, out: int, read: int = 0, create: int = 0) -> dict:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": create,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": create, "ephemeral_1h_input_tokens": 0},
        "output_tokens": out,
        "service_tier": "standard",
    }


def snapshot(n: int, ts: str) -> dict:
    mid = f"00000000-0000-4000-8000-{n:012d}"
    return {
        "type": "file-history-snapshot",
        "messageId": mid,
        "snapshot": {"messageId": mid, "trackedFileBackups": {}, "timestamp": ts},
        "isSnapshotUpdate": n > 1,
    }


# ---------------------------------------------------------------------------------------------
# Claude Code writer


class Claude:
    def __init__(self, sid: str, cwd: str, version: str, *, ids: bool = True):
        self.sid, self.cwd, self.version, self.ids = sid, cwd, version, ids
        self.lines: list[dict] = []
        self.last: str | None = None
        self.n = 0

    def _rec(self, kind: str, ts, *, side: str | None = None, parent: object = "chain") -> dict:
        self.n += 1
        u = f"{self.sid[:8]}-{self.n:04d}-4000-8000-{self.n:012d}"
        rec = {
            "parentUuid": self.last if parent == "chain" else parent,
            "isSidechain": side is not None,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": "main",
        }
        if side:
            rec["agentId"] = side
        rec["type"] = kind
        if not self.ids:  # exported by another tool: no sessionId, uuid or parentUuid
            for key in ("parentUuid", "sessionId"):
                rec.pop(key)
        else:
            rec["uuid"] = u
        if ts is not None:
            rec["timestamp"] = ts if isinstance(ts, str) else iso(ts)
        if side is None:
            self.last = u
        return rec

    def prompt(self, ts, text: str, **kw) -> dict:
        rec = self._rec("user", ts, **kw)
        rec["message"] = {"role": "user", "content": text}
        self.lines.append(rec)
        return rec

    def assistant(self, ts, msg: str, blocks: list, usage: dict, stop=None, **kw) -> dict:
        rec = self._rec("assistant", ts, **kw)
        rec["message"] = {
            "model": MODEL,
            "id": f"msg_01{msg}",
            "type": "message",
            "role": "assistant",
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        rec["requestId"] = f"req_011{msg}"
        self.lines.append(rec)
        return rec

    def text(self, ts, msg: str, text: str, usage: dict, stop="end_turn", **kw) -> dict:
        return self.assistant(ts, msg, [{"type": "text", "text": text}], usage, stop, **kw)

    def tool(self, ts, msg: str, name: str, inp: dict, usage: dict, **kw) -> str:
        tid = f"toolu_01{msg}{name}"
        self.assistant(ts, msg, [{"type": "tool_use", "id": tid, "name": name, "input": inp}], usage, "tool_use", **kw)
        return tid

    def result(self, ts, tid: str, content, tur: dict, **kw) -> dict:
        rec = self._rec("user", ts, **kw)
        rec["message"] = {
            "role": "user",
            "content": [{"tool_use_id": tid, "type": "tool_result", "content": content, "is_error": False}],
        }
        rec["toolUseResult"] = tur
        self.lines.append(rec)
        return rec

    def bash(self, ts, end, msg: str, command: str, out: str = "", *, ts_end=None) -> str:
        inp = {"command": command, "description": "run " + command.split()[0]}
        tid = self.tool(ts, msg, "Bash", inp, cusage(4, 60, 12000, 90))
        self.result(
            end if ts_end is None else ts_end,
            tid,
            out,
            {"stdout": out, "stderr": "", "interrupted": False, "isImage": False},
        )
        return tid


def write_claude(c: Claude, lines: list[dict] | None = None) -> None:
    key = "-" + c.cwd.strip("/").replace("/", "-")
    path = HERE / "claude-code" / "projects" / key / f"{c.sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(dumps(r) + "\n" for r in (lines if lines is not None else c.lines)))


# ---------------------------------------------------------------------------------------------
# Codex writer


class Rollout:
    def __init__(self, name: str, cwd: str, *, interactive: bool = False, meta: str = "first"):
        start, self.id = CODEX[name]
        self.name, self.start, self.cwd = name, T(start), cwd
        self.lines: list[dict] = []
        self.tot = 0
        self.out = 0
        origin = ("codex-tui", "cli", "0.125.0") if interactive else ("codex_exec", "exec", "0.77.0")
        self.meta = {
            "id": self.id,
            "timestamp": iso(self.start),
            "cwd": cwd,
            "originator": origin[0],
            "cli_version": origin[2],
            "source": origin[1],
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent working in the user's repository."},
            "git": GIT,
        }
        self.mode = meta
        if meta == "first":
            self.emit(ms(self.start, 40), "session_meta", self.meta)

    def emit(self, ts: datetime, kind: str, payload: dict) -> None:
        self.lines.append({"timestamp": iso(ts), "type": kind, "payload": payload})

    def late_meta(self, ts: datetime) -> None:
        self.emit(ts, "session_meta", self.meta)

    def turn(self, ts: datetime, prompt: str) -> None:
        self.emit(
            ts, "event_msg", {"type": "task_started", "turn_id": f"turn-{self.name}", "model_context_window": 272000}
        )
        self.emit(
            ms(ts, 3),
            "turn_context",
            {
                "turn_id": f"turn-{self.name}",
                "cwd": self.cwd,
                "approval_policy": "never",
                "sandbox_policy": {"type": "read-only"},
                "model": "gpt-5.1-codex-max",
                "effort": "medium",
                "summary": "auto",
            },
        )
        self.emit(
            ms(ts, 4),
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]},
        )
        self.emit(ms(ts, 5), "event_msg", {"type": "user_message", "message": prompt, "images": []})

    def exec(self, ts: datetime, cmd: str, out: str, parsed: list, *, workdir: bool = True, end_event: bool = True):
        call = f"call_{self.name}_{len(self.lines):03d}"
        args = {"cmd": cmd, "yield_time_ms": 10000, "max_output_tokens": 10000}
        if workdir:
            args["workdir"] = self.cwd
        self.emit(
            ts,
            "response_item",
            {"type": "function_call", "name": "exec_command", "arguments": dumps(args), "call_id": call},
        )
        if end_event:
            self.emit(
                ms(ts, 40),
                "event_msg",
                {
                    "type": "exec_command_end",
                    "call_id": call,
                    "process_id": "4100",
                    "turn_id": f"turn-{self.name}",
                    "command": ["/bin/bash", "-lc", cmd],
                    "cwd": self.cwd,
                    "parsed_cmd": parsed,
                    "stdout": "",
                    "stderr": "",
                    "aggregated_output": out,
                    "exit_code": 0,
                    "duration": {"secs": 0, "nanos": 40_000_000},
                    "status": "completed",
                },
            )
        self.emit(
            ms(ts, 46),
            "response_item",
            {
                "type": "function_call_output",
                "call_id": call,
                "output": f"Chunk ID: 1a2b3c\nWall time: 0.0400 seconds\nProcess exited with code 0\nOutput:\n{out}",
            },
        )
        return call

    def tokens(self, ts: datetime, inp: int, out: int) -> None:
        self.tot += inp + out
        self.out += out
        total = {
            "input_tokens": self.tot - self.out,
            "cached_input_tokens": 0,
            "output_tokens": self.out,
            "reasoning_output_tokens": 0,
            "total_tokens": self.tot,
        }
        self.emit(
            ts,
            "event_msg",
            {
                "type": "token_count",
                "info": {"total_token_usage": total, "model_context_window": 272000},
                "rate_limits": None,
            },
        )

    def answer(self, ts: datetime, text: str) -> None:
        self.emit(ts, "event_msg", {"type": "agent_message", "message": text})
        self.emit(
            ms(ts, 2),
            "response_item",
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]},
        )
        self.emit(
            ms(ts, 5),
            "event_msg",
            {"type": "task_complete", "turn_id": f"turn-{self.name}", "last_agent_message": text},
        )

    def write(self) -> None:
        stamp = self.start.strftime("%Y-%m-%dT%H-%M-%S")
        path = HERE / "codex" / "sessions" / "2026" / "02" / "10" / f"rollout-{stamp}-{self.id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(dumps(r) + "\n" for r in self.lines))


def simple_run(name: str, cwd: str, prompt: str, answer: str, *, interactive: bool = False, secs: int = 20):
    r = Rollout(name, cwd, interactive=interactive)
    r.turn(ms(r.start, 60), prompt)
    r.tokens(ms(r.start, 4000), 8200, 90)
    r.answer(ms(r.start, secs * 1000), answer)
    r.tokens(ms(r.start, secs * 1000 + 10), 300, 40)
    r.write()


# ---------------------------------------------------------------------------------------------
# the story


def files_without_ids() -> None:
    # C1: a Claude transcript exported by another tool: nine snapshot lines, then records with no
    # sessionId, uuid or parentUuid. It writes notes/plan.md with the Write tool.
    c = Claude(S_C1, WILD, "2.1.39", ids=False)
    c.prompt(T("09:05:00.000"), "write the plan for the wild release into notes/plan.md")
    tid = c.tool(
        T("09:05:08.000"),
        "C1a",
        "Write",
        {"file_path": WILD + "/notes/plan.md", "content": "1. review T1-T4\n2. ship\n"},
        cusage(3, 80, 0, 9000),
    )
    c.result(
        T("09:05:10.000"),
        tid,
        "File created successfully at: " + WILD + "/notes/plan.md",
        {"type": "create", "filePath": WILD + "/notes/plan.md"},
    )
    c.text(T("09:05:20.000"), "C1b", "The plan is in notes/plan.md.", cusage(4, 12, 9000, 120))
    snaps = [snapshot(i, f"{DAY}T09:0{i // 5}:{(i * 7) % 60:02d}.000Z") for i in range(1, 10)]
    write_claude(c, snaps + c.lines)

    # S: a Claude file of file-history snapshots only (a stub Claude writes): no session.
    write_claude(Claude(S_S, WILD, "2.1.39"), [snapshot(i, f"{DAY}T09:30:0{i}.000Z") for i in range(1, 4)])

    # C2: a Codex rollout whose session_meta was trimmed away; it reads notes/plan.md.
    r = Rollout("C2", WILD, meta="none")
    r.turn(T("09:10:00.000"), "summarise notes/plan.md")
    r.exec(
        T("09:10:20.000"),
        "cat notes/plan.md",
        "1. review T1-T4\n2. ship\n",
        [{"type": "read", "cmd": "cat notes/plan.md", "name": "plan.md", "path": "notes/plan.md"}],
    )
    r.tokens(T("09:10:21.000"), 7000, 60)
    r.answer(T("09:10:30.000"), "Two steps: review T1-T4, then ship.")
    r.write()

    # C3: a Codex rollout whose first record is a shell call; session_meta comes after it.
    r = Rollout("C3", WILD, meta="late")
    r.exec(
        T("09:20:05.000"),
        "sed -n 1,20p notes/plan.md",
        "1. review T1-T4\n2. ship\n",
        [],
        workdir=False,
        end_event=False,
    )
    r.late_meta(T("09:20:30.000"))
    r.turn(T("09:20:31.000"), "what does the plan say?")
    r.tokens(T("09:20:40.000"), 6800, 40)
    r.answer(T("09:20:45.000"), "Review T1 to T4, then ship.")
    r.write()


def script_lead() -> dict:
    """L: Claude lead in the workspace; every launch goes through a command or a script."""
    g = Claude(S_L, WILD, "2.1.39")
    calls = {}
    g.prompt(T("09:59:50.000"), "get tasks T1-T4 reviewed by codex through tools/review.sh")
    calls["a"] = g.bash(T("10:00:00.000"), T("10:00:40.000"), "La", "tools/review.sh T1", "T1: no findings\n")
    calls["c"] = g.bash(
        T("10:10:00.000"),
        T("10:11:00.000"),
        "Lc",
        "for t in T3 T4; do tools/review.sh $t; done",
        "T3: no findings\nT4: one nit\n",
    )
    calls["d"] = g.bash(
        T("10:15:00.000"),
        T("10:15:02.000"),
        "Ld",
        "grep -n codex tools/review.sh tools/agent.sh",
        'tools/agent.sh:4:exec codex exec --full-auto "$1"\n',
    )
    calls["e"] = g.bash(
        T("10:16:00.000"),
        T("10:16:01.000"),
        "Le",
        "tools/deploy.sh --dry-run",
        "bash: tools/deploy.sh: No such file or directory\n",
    )
    calls["f"] = g.bash(T("10:17:00.000"), T("10:17:30.000"), "Lf", "tools/ext.sh", "done\n")
    calls["g"] = g.bash(T("10:18:00.000"), T("10:18:20.000"), "Lg", "for t in lint test; do tools/$t.sh; done", "")
    # (w) a Write whose call and result both lack a valid time
    tid = g.tool(
        "2026-02-30T25:61:00.000Z",
        "Lw",
        "Write",
        {"file_path": WILD + "/docs/out.md", "content": "review summary\n"},
        cusage(3, 40, 12000, 60),
    )
    g.result(
        None,
        tid,
        "File created successfully at: " + WILD + "/docs/out.md",
        {"type": "create", "filePath": WILD + "/docs/out.md"},
    )
    calls["w"] = tid
    calls["b"] = g.bash(T("10:30:00.000"), T("10:30:01.000"), "Lb", "nohup tools/review.sh T2 >/dev/null 2>&1 &")
    calls["h"] = g.bash(
        T("10:40:00.000"),
        T("10:40:30.000"),
        "Lh",
        'omx exec --skip-git-repo-check "summarise docs/out.md"',
        "docs/out.md: one review\n",
    )
    # (i) a launch whose call has no valid time: it can join nothing
    calls["i"] = g.bash(None, None, "Li", 'codex exec "lint the docs"', "ok\n", ts_end="yesterday")
    g.text(T("10:55:00.000"), "Lz", "All four tasks are reviewed.", cusage(4, 20, 12000, 80))
    write_claude(g)
    return calls


def launched_runs() -> None:
    simple_run("R1", WILD, "review task T1", "T1: no findings")
    simple_run("D2", WILD, "run the unit tests", "14 passed")
    simple_run("R3A", WILD, "review task T3", "T3: no findings")
    simple_run("D3", WILD, "what is in tools/?", "review.sh, agent.sh and ext.sh", interactive=True, secs=60)
    simple_run("R3B", WILD, "review task T4", "T4: one nit")
    simple_run("D1", WILD, "count the TODO markers", "3 TODO markers")
    simple_run("D4", WILD, "external check", "done")
    simple_run("X1", ELSEWHERE, "review task T2", "T2: no findings (in elsewhere)")
    simple_run("R2", WILD, "review task T2", "T2: no findings")
    simple_run("N1", WILD, "lint the docs", "docs are clean")
    r = Rollout("O1", WILD)  # the `omx exec` run reads docs/out.md
    r.turn(ms(r.start, 60), "summarise docs/out.md")
    r.exec(
        T("10:40:10.000"),
        "cat docs/out.md",
        "review summary\n",
        [{"type": "read", "cmd": "cat docs/out.md", "name": "out.md", "path": "docs/out.md"}],
    )
    r.tokens(T("10:40:11.000"), 7100, 50)
    r.answer(T("10:40:25.000"), "docs/out.md: one review")
    r.tokens(T("10:40:25.100"), 200, 20)
    r.write()


def inline_sidechains() -> dict:
    """P: a Claude transcript holding its subagents inline, each record naming its agentId."""
    p = Claude(S_P, WILD, "2.0.24")
    p.prompt(T("11:00:00.000"), "survey the tests folder with a subagent")
    task_prompt = "Survey the tests folder and list slow tests."
    task = p.tool(
        T("11:00:05.000"),
        "P1",
        "Task",
        {"description": "Survey tests", "prompt": task_prompt, "subagent_type": "general-purpose"},
        cusage(3, 70, 9000, 100),
    )
    # agent A: two chains (the second resumes it) and one response logged as two records
    first = p.prompt(T("11:00:06.000"), task_prompt, side=AGENT_A, parent=None)
    a1 = p.text(
        T("11:00:10.000"), "A1", "Looking at tests/.", cusage(5, 50, 0, 4000), None, side=AGENT_A, parent=first["uuid"]
    )
    p.text(T("11:00:10.500"), "A1", "Listing durations.", cusage(5, 50, 0, 4000), None, side=AGENT_A, parent=a1["uuid"])
    p.text(
        T("11:00:20.000"),
        "A2",
        "Two slow tests: test_sync, test_big.",
        cusage(6, 30, 4000, 200),
        side=AGENT_A,
        parent=a1["uuid"],
    )
    again = p.prompt(T("11:00:25.000"), "also check fixtures", side=AGENT_A, parent=None)
    p.text(T("11:00:28.000"), "A3", "Fixtures are fine.", cusage(7, 20, 4200, 100), side=AGENT_A, parent=again["uuid"])
    p.result(
        T("11:00:30.000"),
        task,
        [{"type": "text", "text": "Two slow tests: test_sync, test_big."}],
        {
            "status": "completed",
            "prompt": task_prompt,
            "agentId": AGENT_A,
            "content": [{"type": "text", "text": "Two slow tests: test_sync, test_big."}],
            "totalDurationMs": 25000,
            "totalTokens": 4400,
            "totalToolUseCount": 0,
        },
    )
    p.text(T("11:00:35.000"), "P2", "The subagent found two slow tests.", cusage(4, 18, 9100, 60))
    # agent B: inline records no Task call names (only the shared transcript ties them)
    b = p.prompt(T("11:01:00.000"), "Warm the cache for tests/", side=AGENT_B, parent=None)
    p.text(T("11:01:05.000"), "B1", "Cache warmed.", cusage(4, 15, 0, 3000), side=AGENT_B, parent=b["uuid"])
    write_claude(p)
    return {"task": task}


def scripts() -> None:
    tools = HERE / "projects" / "wild" / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    (tools / "review.sh").write_text(
        "#!/usr/bin/env bash\n# Review one task with codex (lineage-wild scenario).\nset -euo pipefail\n"
        'task="$1"\nexec tools/agent.sh "review task $task"\n'
    )
    (tools / "agent.sh").write_text(
        '#!/bin/sh\n# The one place the agent CLI is named. WILD-SCRIPT-BODY-MARKER\nexec codex exec --full-auto "$1"\n'
    )
    outside = HERE / "projects" / "outside"
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "ext.sh").write_text('#!/bin/sh\n# outside the workspace: never read\ncodex exec "external check"\n')
    link = tools / "ext.sh"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to("../../outside/ext.sh")


def main() -> None:
    for sub in ("claude-code", "codex", "projects"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    scripts()
    files_without_ids()
    calls = script_lead()
    launched_runs()
    inline_sidechains()
    print(json.dumps(calls, indent=1))


if __name__ == "__main__":
    main()
