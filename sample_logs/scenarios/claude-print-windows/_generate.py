"""Write the synthetic "claude-print-windows" scenario (issue 26): a Claude Code session on Windows
that runs `claude -p` three times from its Bash tool (twice with the same prompt seconds apart,
once through a wrapper script, `node claude-wrapper.js --print ...`), the three print-mode sessions
those runs wrote, and an interactive look-alike. Output (next to this script):

  claude-code/projects/C--Users-me-proj/<sessionId>.jsonl   Claude Code 2.1.141 transcripts
  expected.json, EXPECTED.md                                the edges a correct inference finds

The transcripts spell the cwd the Windows way (`"cwd":"C:\\\\Users\\\\me\\\\proj"` in the JSON), the
commands the Git Bash way (`cd C:/Users/me/proj && ...`); the launched sessions carry
`entrypoint: sdk-cli` and `promptSource: sdk`, like real print-mode runs, and each one's final
answer is what its call captured (one of them with Windows line ends). Everything is invented;
shapes follow shared/specs/harness-log-formats.md section 1. Python stdlib only and deterministic:
re-running rewrites the same bytes. Run: python sample_logs/scenarios/claude-print-windows/_generate.py
"""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
CWD = "C:\\Users\\me\\proj"  # as Claude Code on Windows writes it
KEY = "C--Users-me-proj"  # its project folder name
VERSION = "2.1.141"
MODEL = "claude-sonnet-4-5-20250929"
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

S_W = "4f1d2a87-3c5e-4b9a-8d61-7e0c9b2f5a13"  # the lead, interactive
S_P1 = "9a3e5c71-2b8d-4f06-a1e4-6c7d0b9e2f58"  # `claude -p "say hi"`, first
S_P2 = "c6b0e2d4-7f19-4a3c-9e85-1d2a6f4b8c07"  # `claude -p "say hi"`, again 12 s later
S_P3 = "e2d7a9f3-5c4b-4e81-b0a6-8f3c1d5e7b92"  # through node claude-wrapper.js --print
S_D = "1b8c4e6a-9d2f-4c57-83e0-5a7f2b9d6c41"  # distractor: an interactive session in the same folder


def T(hms: str) -> datetime:
    return datetime.strptime(f"2026-02-10T{hms}", "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def _digest(label: str) -> bytes:
    return hashlib.sha256(("claude-print-windows/" + label).encode()).digest()


def uid(label: str) -> str:
    h = bytearray(_digest(label)[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def b62(label: str, n: int) -> str:
    return "".join(B62[b % 62] for b in _digest(label)[:n])


def usage(inp: int, out: int, create: int = 0, read: int = 0) -> dict:
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": create,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": create, "ephemeral_1h_input_tokens": 0},
        "output_tokens": out,
        "service_tier": "standard",
    }


class Claude:
    def __init__(self, sid: str, *, entrypoint: str, sdk: bool = False):
        self.sid, self.entrypoint, self.sdk = sid, entrypoint, sdk
        self.lines: list[dict] = []
        self.last: str | None = None
        self.n = 0

    def _rec(self, kind: str, ts: datetime) -> dict:
        self.n += 1
        u = uid(f"{self.sid}/{self.n}")
        rec = {"parentUuid": self.last, "isSidechain": False, "userType": "external"}
        rec.update(entrypoint=self.entrypoint, cwd=CWD, sessionId=self.sid, version=VERSION, gitBranch="main")
        rec.update(type=kind, uuid=u, timestamp=iso(ts))
        self.last = u
        return rec

    def prompt(self, ts: datetime, text: str) -> None:
        rec = self._rec("user", ts)
        rec["message"] = {"role": "user", "content": text}
        if self.sdk:
            rec["promptSource"] = "sdk"
        self.lines.append(rec)

    def _assistant(self, ts: datetime, msg: str, block: dict, stop: str | None, tokens: tuple) -> None:
        rec = self._rec("assistant", ts)
        rec["message"] = {
            "model": MODEL,
            "id": "msg_01" + b62(f"{self.sid}/msg/{msg}", 22),
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage(*tokens),
        }
        rec["requestId"] = "req_011C" + b62(f"{self.sid}/req/{msg}", 20)
        self.lines.append(rec)

    def text(self, ts: datetime, msg: str, text: str, tokens: tuple = (3, 12, 4200)) -> None:
        self._assistant(ts, msg, {"type": "text", "text": text}, "end_turn", tokens)

    def bash(self, ts: datetime, done: datetime, msg: str, command: str, stdout: str) -> str:
        tid = "toolu_01" + b62(f"{self.sid}/toolu/{msg}", 22)
        inp = {"command": command, "description": "Run claude in print mode"}
        self._assistant(ts, msg, {"type": "tool_use", "id": tid, "name": "Bash", "input": inp}, "tool_use", (3, 60))
        source = self.last
        rec = self._rec("user", done)
        block = {"tool_use_id": tid, "type": "tool_result", "content": stdout, "is_error": False}
        rec["message"] = {"role": "user", "content": [block]}
        rec["toolUseResult"] = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
        rec["sourceToolAssistantUUID"] = source
        self.lines.append(rec)
        return tid

    def write(self) -> Path:
        path = HERE / "claude-code" / "projects" / KEY / f"{self.sid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            for line in self.lines:
                fh.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")
        return path


HI = "Hi! How can I help you today?"
FILES = "The folder holds README.md, package.json and src/."
SAY_HI = 'cd C:/Users/me/proj && echo "say hi" | timeout 15 claude -p "say hi"'
WRAPPED = 'cd C:/Users/me/proj && node claude-wrapper.js --print "list the files here"'


def printed(sid: str, start: datetime, prompt: str, answer: str) -> Claude:
    s = Claude(sid, entrypoint="sdk-cli", sdk=True)
    s.prompt(start, prompt)
    s.text(start + timedelta(seconds=2), "a1", answer)
    return s


def main() -> None:
    shutil.rmtree(HERE / "claude-code", ignore_errors=True)
    lead = Claude(S_W, entrypoint="cli")
    lead.prompt(T("09:59:50.000"), "check that claude -p works from here")
    calls = {
        "a": lead.bash(T("10:00:00.000"), T("10:00:10.000"), "b1", SAY_HI, HI + "\n"),
        "b": lead.bash(T("10:00:12.000"), T("10:00:20.000"), "b2", SAY_HI, HI + "\n"),
        # the wrapper's console writes Windows line ends
        "c": lead.bash(T("10:01:00.000"), T("10:01:09.000"), "b3", WRAPPED, FILES.replace(". ", ".\r\n") + "\r\n"),
    }
    lead.text(T("10:01:12.000"), "end", "All three runs answered.")
    sessions = {
        "W": lead,
        "P1": printed(S_P1, T("10:00:03.000"), "say hi", HI),
        "P2": printed(S_P2, T("10:00:14.000"), "say hi", HI),  # also inside call (a)'s 5 s slack
        "P3": printed(S_P3, T("10:01:04.000"), "list the files here", FILES.replace(". ", ".\n")),
    }
    d = Claude(S_D, entrypoint="cli")  # the user opened another session in the folder meanwhile
    d.prompt(T("10:00:05.000"), "hi")
    d.text(T("10:00:07.000"), "a1", HI)
    sessions["D"] = d
    files = {name: s.write() for name, s in sessions.items()}
    names = {name: f"claude-code:{s.sid}" for name, s in sessions.items()}
    edge = {"kind": "launch", "src": "W", "tier": "verified"}
    exp = {
        "about": "Expected lineage for sample_logs/scenarios/claude-print-windows (synthetic; written by"
        " _generate.py). Every launch is verified: the launched session's final answer hashes the same as"
        " the call's captured output, and it started in the call's window.",
        "sessions": names,
        "files": {name: str(p.relative_to(HERE)) for name, p in files.items()},
        "edges": [
            {**edge, "dst": "P1", "src_call_id": calls["a"]},
            {**edge, "dst": "P2", "src_call_id": calls["b"]},
            {**edge, "dst": "P3", "src_call_id": calls["c"], "wrapper": True},
        ],
        "not_edges": [
            {"kind": "launch", "src": "W", "dst": "D", "why": "interactive (entrypoint cli), though in the folder"},
        ],
        "launches": 2,  # `launches` rows: the wrapper is no launch until named (--launcher)
        "launcher": "claude-wrapper.js=claude-code",
        # Call (a)'s window (its end + 5 s) also holds P2: two candidates for (a), two launchers
        # for P2, counted; time gives each call its own session.
        "counters": [
            {"pass": "launch", "code": "ambiguous_launch", "session": "W", "call_id": calls["a"], "count": 1},
            {"pass": "launch", "code": "ambiguous_launcher", "session": "P2", "call_id": calls["b"], "count": 1},
        ],
    }
    (HERE / "expected.json").write_text(json.dumps(exp, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
