"""Write the synthetic "paths" logs (issue 26, items 1-2): a launch through a workspace script whose
files share nothing else, and a family written on Windows whose paths come in several spellings.
The story and the expected edges are in EXPECTED.md / expected.json, written by hand from this
story (not from sessiongraph's output).

  claude-code/projects/<projectKey>/<id>.jsonl           Claude Code transcripts
  codex/sessions/2026/03/04/rollout-<UTC time>-<id>.jsonl Codex rollouts (filename time in UTC)
  projects/relay/tools/review.sh                         the relay workspace's script

The relay logs name the workspace /home/dev/projects/relay: its script is read only when it exists
on the machine doing the ingest, so tests copy this folder and replace /home/dev/projects with the
copied projects/ folder. The Windows logs name C:\\Users\\me\\proj, each file in its own spelling
(tests rewrite them in every spelling of ingest/paths.py).

Everything is invented; shapes follow shared/specs/harness-log-formats.md and the lineage-wild
scenario. Python stdlib only, deterministic. Run: python sample_logs/scenarios/paths/_generate.py
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
DAY = "2026-03-04"
RELAY = "/home/dev/projects/relay"
MODEL = "claude-opus-4-5-20251101"

S_RELAY = "7d3a9c41-2e5b-4f80-9a16-c4e8b2d05f37"  # Claude lead in relay: launches only through the script
S_WIN = "b81e4f2a-6c09-4d73-8e5a-1f2d3c4b5a69"  # Claude lead on Windows
# Codex threads by name: start, the tail of the UUIDv7 id (its first 48 bits are the start in
# ms), cwd as that rollout spells it, source
CODEX = {
    "R1": ("09:00:20.000", "7a01-8b3c-5d6e7f809a1b", RELAY, "exec"),  # child of backgrounded (a)
    "R2": ("09:20:05.000", "7b02-9c4d-6e7f8091ab2c", RELAY, "exec"),  # loop (b), T2
    "R3": ("09:20:35.000", "7c03-ad5e-7f8091a2bc3d", RELAY, "exec"),  # loop (b), T3
    "RD": ("09:45:00.000", "7d04-be6f-8091a2b3cd4e", RELAY, "exec"),  # after every window
    "X1": ("10:00:04.000", "7e05-8f70-91a2b3c4de5f", None, "exec"),  # child of (W1), its id printed
    "X2": ("10:10:03.000", "7f06-9081-a2b3c4d5ef60", None, "exec"),  # child of (W3), in sub/
    "XD": ("10:10:06.000", "7007-a192-b3c4d5e6f071", None, "exec"),  # another folder, during (W3)
}


def T(hms: str) -> datetime:
    return datetime.strptime(f"{DAY}T{hms}", "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=UTC)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def ms(t: datetime, n: int) -> datetime:
    return t + timedelta(milliseconds=n)


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def cusage(inp: int, out: int) -> dict:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": 90,
        "cache_read_input_tokens": 12000,
        "cache_creation": {"ephemeral_5m_input_tokens": 90, "ephemeral_1h_input_tokens": 0},
        "output_tokens": out,
        "service_tier": "standard",
    }


class Claude:
    def __init__(self, sid: str, cwd: str, version: str):
        self.sid, self.cwd, self.version = sid, cwd, version
        self.lines: list[dict] = []
        self.last: str | None = None
        self.n = 0

    def _rec(self, kind: str, ts: datetime) -> dict:
        self.n += 1
        u = f"{self.sid[:8]}-{self.n:04d}-4000-8000-{self.n:012d}"
        rec = {
            "parentUuid": self.last,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.sid,
            "version": self.version,
            "gitBranch": "main",
            "type": kind,
            "uuid": u,
            "timestamp": iso(ts),
        }
        self.last = u
        return rec

    def prompt(self, ts: datetime, text: str) -> None:
        rec = self._rec("user", ts)
        rec["message"] = {"role": "user", "content": text}
        self.lines.append(rec)

    def _assistant(self, ts: datetime, msg: str, blocks: list, stop: str) -> None:
        rec = self._rec("assistant", ts)
        rec["message"] = {
            "model": MODEL,
            "id": f"msg_01{msg}",
            "type": "message",
            "role": "assistant",
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": cusage(4, 60),
        }
        rec["requestId"] = f"req_011{msg}"
        self.lines.append(rec)

    def text(self, ts: datetime, msg: str, text: str) -> None:
        self._assistant(ts, msg, [{"type": "text", "text": text}], "end_turn")

    def tool(self, ts: datetime, end: datetime, msg: str, name: str, inp: dict, out: str, tur: dict) -> str:
        tid = f"toolu_01{msg}{name}"
        self._assistant(ts, msg, [{"type": "tool_use", "id": tid, "name": name, "input": inp}], "tool_use")
        rec = self._rec("user", end)
        rec["message"] = {
            "role": "user",
            "content": [{"tool_use_id": tid, "type": "tool_result", "content": out, "is_error": False}],
        }
        rec["toolUseResult"] = tur
        self.lines.append(rec)
        return tid

    def bash(self, ts: datetime, end: datetime, msg: str, command: str, out: str = "", **inp) -> str:
        tur = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
        return self.tool(ts, end, msg, "Bash", {"command": command, "description": "run it", **inp}, out, tur)

    def write(self, root: Path = HERE) -> None:
        key = "".join(c if c.isalnum() else "-" for c in self.cwd)  # projectKey (spec 1.1)
        path = root / "claude-code" / "projects" / key / f"{self.sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(dumps(r) + "\n" for r in self.lines))


def thread_id(name: str) -> str:
    start, tail = T(CODEX[name][0]), CODEX[name][1]
    head = f"{int(start.timestamp() * 1000):012x}"
    return f"{head[:8]}-{head[8:]}-{tail}"


class Rollout:
    def __init__(self, name: str, cwd: str | None = None):
        start, _tail, written, source = CODEX[name]
        self.name, self.start, self.id, self.cwd = name, T(start), thread_id(name), cwd or written
        self.lines: list[dict] = []
        meta = {
            "id": self.id,
            "timestamp": iso(self.start),
            "cwd": self.cwd,
            "originator": "codex_exec",
            "cli_version": "0.77.0",
            "source": source,
            "model_provider": "openai",
            "base_instructions": {"text": "You are Codex, a coding agent working in the user's repository."},
        }
        self.emit(ms(self.start, 40), "session_meta", meta)

    def emit(self, ts: datetime, kind: str, payload: dict) -> None:
        self.lines.append({"timestamp": iso(ts), "type": kind, "payload": payload})

    def turn(self, ts: datetime, prompt: str) -> None:
        self.emit(ts, "event_msg", {"type": "task_started", "turn_id": f"turn-{self.name}"})
        self.emit(
            ms(ts, 3),
            "turn_context",
            {"turn_id": f"turn-{self.name}", "cwd": self.cwd, "approval_policy": "never", "model": "gpt-5.1-codex"},
        )
        self.emit(
            ms(ts, 4), "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}
        )
        self.emit(ms(ts, 5), "event_msg", {"type": "user_message", "message": prompt, "images": []})

    def exec(self, ts: datetime, cmd: str, workdir: str, out: str = "ok\n") -> str:
        call = f"call_{self.name}_{len(self.lines):03d}"
        args = {"cmd": cmd, "workdir": workdir, "yield_time_ms": 10000}
        self.emit(ts, "response_item", {"type": "function_call", "name": "exec_command", "arguments": dumps(args), "call_id": call})
        self.emit(
            ms(ts, 46),
            "response_item",
            {"type": "function_call_output", "call_id": call, "output": f"Process exited with code 0\nOutput:\n{out}"},
        )
        return call

    def patch(self, ts: datetime, rel: str, full: str) -> str:
        call = f"call_{self.name}_{len(self.lines):03d}"
        self.emit(
            ts,
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call,
                "name": "apply_patch",
                "input": f"*** Begin Patch\n*** Add File: {rel}\n+generated\n*** End Patch\n",
            },
        )
        self.emit(
            ms(ts, 20),
            "event_msg",
            {
                "type": "patch_apply_end",
                "call_id": call,
                "turn_id": f"turn-{self.name}",
                "stdout": "",
                "stderr": "",
                "success": True,
                "changes": {full: {"type": "add", "content": "generated\n"}},
            },
        )
        self.emit(
            ms(ts, 21),
            "response_item",
            {"type": "custom_tool_call_output", "call_id": call, "output": dumps({"output": f"Success.\nA {rel}\n"})},
        )
        return call

    def answer(self, ts: datetime, text: str) -> None:
        self.emit(ts, "event_msg", {"type": "agent_message", "message": text})
        self.emit(
            ms(ts, 2), "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}
        )
        self.emit(ms(ts, 5), "event_msg", {"type": "task_complete", "turn_id": f"turn-{self.name}", "last_agent_message": text})

    def write(self, root: Path = HERE) -> None:
        stamp = self.start.strftime("%Y-%m-%dT%H-%M-%S")
        path = root / "codex" / "sessions" / "2026" / "03" / "04" / f"rollout-{stamp}-{self.id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(dumps(r) + "\n" for r in self.lines))


def relay() -> None:
    """L runs Codex only through tools/review.sh, which moves to the workspace root first."""
    c = Claude(S_RELAY, RELAY, "2.1.42")
    c.prompt(T("08:59:50.000"), "have codex review T1 in the background, then T2 and T3")
    c.bash(T("09:00:00.000"), T("09:00:01.000"), "Ra", "nohup tools/review.sh T1 > /dev/null 2>&1 &")
    c.bash(T("09:20:00.000"), T("09:21:00.000"), "Rb", "for t in T2 T3; do tools/review.sh $t; done", "reviewed\n")
    c.text(T("09:21:05.000"), "Rc", "All three reviews ran.")
    c.write()
    for name, prompt in (("R1", "review task T1"), ("R2", "review task T2"), ("R3", "review task T3"), ("RD", "tidy")):
        r = Rollout(name)
        r.turn(ms(r.start, 100), prompt)
        r.exec(ms(r.start, 2000), "git diff --stat", RELAY)
        r.answer(ms(r.start, 8000), "Looks fine.")
        r.write()
    script = HERE / "projects" / "relay" / "tools" / "review.sh"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(
        "#!/usr/bin/env bash\n# Review one task with codex (paths scenario).\nset -euo pipefail\n"
        'cd "$(dirname "$0")/.."\nexec codex exec --full-auto "review task $1"\n'
    )
    script.chmod(0o755)


# Spellings of a Windows path (segments under drive C:) that ingest/paths.py makes one; `dir`
# says the path is a folder (a cwd), which may carry a trailing separator.
SPELLINGS: dict[str, Callable[[list[str], bool], str]] = {
    "backslash": lambda segs, d: "C:\\" + "\\".join(segs),
    "forward": lambda segs, d: "C:/" + "/".join(segs),
    "lower": lambda segs, d: "c:\\" + "\\".join(segs),
    "lower-forward": lambda segs, d: "c:/" + "/".join(segs),
    "trailing": lambda segs, d: "C:\\" + "\\".join(segs) + ("\\" if d else ""),
    "long": lambda segs, d: "\\\\?\\C:\\" + "\\".join(segs),
    "dots": lambda segs, d: "C:\\" + "\\".join([*segs[:2], ".", "other", "..", *segs[2:]]),
    "wsl": lambda segs, d: "/mnt/c/" + "/".join(segs),
    "gitbash": lambda segs, d: "/c/" + "/".join(segs),  # Git Bash / MSYS: a Windows context only
}
# Spellings a shell command line can carry (a backslash is an escape there).
SHELL_SPELLINGS = ("forward", "lower-forward", "wsl", "gitbash")
# What the committed files use: each file, and W's two command lines, spelled another way.
DEFAULT = {"W": "backslash", "W-cd": "gitbash", "W-C": "forward", "X1": "trailing", "X2": "backslash", "XD": "lower"}


def windows(root: Path = HERE, spelled: dict[str, str] | None = None) -> None:
    """W on Windows runs codex twice from Git Bash; X1 writes notes/plan.md, which W and X2 read.
    ``spelled``: role -> spelling (keys of DEFAULT; a cwd spelling may not be gitbash, which is a
    genuine POSIX path outside a Windows context)."""
    sp = {**DEFAULT, **(spelled or {})}

    def at(role: str, rel: str = "", d: bool = True) -> str:
        return SPELLINGS[sp[role]](["Users", "me", "proj", *[x for x in rel.split("/") if x]], d)

    w = Claude(S_WIN, at("W"), "2.1.42")
    w.prompt(T("09:59:50.000"), "have codex draft the plan, then lint sub/")
    out = f"workdir: {at('X1')}\nmodel: gpt-5.1-codex\nsession id: {thread_id('X1')}\n--------\nWrote notes/plan.md\n"
    w.bash(T("10:00:00.000"), T("10:00:30.000"), "W1", f'cd {at("W-cd")} && codex exec --full-auto "draft notes/plan.md"', out)
    plan = at("W", "notes/plan.md", False)
    w.tool(
        T("10:05:00.000"),
        T("10:05:01.000"),
        "W2",
        "Read",
        {"file_path": plan},
        "generated",
        {"type": "text", "file": {"filePath": plan, "content": "generated", "numLines": 1}},
    )
    w.bash(T("10:10:00.000"), T("10:10:20.000"), "W3", f"codex exec -C {at('W-C', 'sub')}/ 'lint this folder' > /dev/null")
    w.text(T("10:10:25.000"), "W4", "Plan drafted and sub/ linted.")
    w.write(root)
    x1 = Rollout("X1", at("X1"))
    x1.turn(ms(x1.start, 100), "draft notes/plan.md")
    x1.patch(ms(x1.start, 3000), "notes/plan.md", at("X1", "notes/plan.md", False))
    x1.answer(ms(x1.start, 6000), "Wrote notes/plan.md")
    x1.write(root)
    x2 = Rollout("X2", at("X2", "sub"))
    x2.turn(ms(x2.start, 100), "lint this folder")
    x2.exec(ms(x2.start, 2000), "cat ../notes/plan.md", at("X2", "sub"))
    x2.answer(ms(x2.start, 9000), "Clean.")
    x2.write(root)
    xd = Rollout("XD", SPELLINGS[sp["XD"]](["Users", "me", "other"], True))
    xd.turn(ms(xd.start, 100), "lint this folder")
    xd.answer(ms(xd.start, 4000), "Clean.")
    xd.write(root)


if __name__ == "__main__":
    for sub in ("claude-code", "codex", "projects"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    relay()
    windows()
