"""Write the synthetic "launch-lamp" scenario: one Claude Code lead that launches Codex runs from
its shell, one Codex TUI session that launches `claude -p`, and look-alike sessions that must NOT
be matched. Output (next to this script):

  claude-code/projects/<projectKey>/<sessionId>.jsonl     Claude Code 2.1.39 transcripts
  codex/sessions/2026/01/05/rollout-<UTC time>-<id>.jsonl  Codex rollouts (filename time in UTC)
  expected.json, EXPECTED.md                               the edges a correct inference finds

Everything is invented. Shapes follow shared/specs/harness-log-formats.md sections 1 and 2 and
the hand-written samples in sample_logs/claude-code and sample_logs/codex. Python stdlib only;
deterministic (ids are fixed or derived from sha256 of a label), so re-running rewrites the same
bytes. Run: python sample_logs/scenarios/launch-lamp/_generate.py
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
DAY = "2026-01-05"
LAMP = "/home/dev/projects/lamp"
SUB = LAMP + "/sub"
OTHER = "/home/dev/projects/other"
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

# ---------------------------------------------------------------------------------------------
# ids and clocks


def T(hms: str) -> datetime:
    """'10:00:02.500' on DAY, UTC."""
    return datetime.strptime(f"{DAY}T{hms}", "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)


def iso(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def epoch_ms(dt: datetime) -> int:
    return (dt - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(milliseconds=1)


def _digest(label: str) -> bytes:
    return hashlib.sha256(("launch-lamp/" + label).encode()).digest()


def uid(label: str) -> str:
    """A UUIDv4-looking id derived from a label."""
    h = bytearray(_digest(label)[:16])
    h[6] = (h[6] & 0x0F) | 0x40
    h[8] = (h[8] & 0x3F) | 0x80
    x = h.hex()
    return f"{x[:8]}-{x[8:12]}-{x[12:16]}-{x[16:20]}-{x[20:]}"


def b62(label: str, n: int) -> str:
    d = _digest(label)
    while len(d) < n:
        d += _digest(label + d.hex())
    return "".join(B62[b % 62] for b in d[:n])


def hexs(label: str, n: int) -> str:
    return _digest(label).hex()[:n]


def uuid7(start: datetime, tail: str) -> str:
    """UUIDv7: 48-bit ms timestamp, version nibble 7, then the 19 hex digits of `tail` (4th = variant)."""
    ms = f"{epoch_ms(start):012x}"
    assert len(tail) == 19 and tail[3] in "89ab", tail
    return f"{ms[:8]}-{ms[8:]}-7{tail[:3]}-{tail[3:7]}-{tail[7:]}"


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def project_key(cwd: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", cwd)


# ---------------------------------------------------------------------------------------------
# session ids (hard-coded so the output never changes)

S_G = "3c9e7f12-5a4b-4d8e-9b61-0f2a7c4d8e53"  # Claude lead in lamp
S_K = "a71d04e9-2c6f-4b3a-8e95-6d1b9f0c2a74"  # Claude `claude -p` child of H
S_L = "e5b2836c-9d10-4f7a-a3c4-1b8e6f5d9027"  # Claude interactive look-alike

START = {
    "G1": T("10:00:02.500"),
    "G2": T("10:00:03.000"),
    "G3": T("09:59:50.000"),
    "G4": T("10:00:05.000"),
    "G5": T("10:05:00.000"),
    "G6": T("10:10:04.000"),
    "G7": T("10:25:03.000"),
    "H": T("11:00:00.000"),
}
TAIL = {  # version nibble 7 is added; these are the other 19 hex digits (variant digit 4th)
    "G1": "a3c9e415b7d2c8f0e16",
    "G2": "d528f03c1a9e6b4d270",
    "G3": "1e8b2c64f9d0a3e7b51",
    "G4": "c04a9d7e2b5f81c6039",
    "G5": "f698b1e3d7a9c05e2f4",
    "G6": "b279a5c6e0f4d81b3a2",
    "G7": "e8db4f219c6a7e0d58b",
    "H": "590a6e3d8b1c2f7094e",
}
CX = {name: uuid7(START[name], TAIL[name]) for name in START}

# ---------------------------------------------------------------------------------------------
# Claude Code writer


def cusage(inp, out, read=0, create=0):
    return {
        "input_tokens": inp,
        "cache_creation_input_tokens": create,
        "cache_read_input_tokens": read,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": create},
        "output_tokens": out,
        "service_tier": "standard",
    }


class Claude:
    MODEL = "claude-opus-4-5-20251101"

    def __init__(self, sid, cwd, branch, *, slug=None, entrypoint=None, version="2.1.39"):
        self.sid, self.cwd, self.branch = sid, cwd, branch
        self.slug, self.entrypoint, self.version = slug, entrypoint, version
        self.lines: list[dict] = []
        self.last: str | None = None  # uuid of the previous threaded record
        self.n = 0

    def _uuid(self) -> str:
        self.n += 1
        return uid(f"{self.sid}/{self.n}")

    def _env(self, kind: str) -> dict:
        rec = {"parentUuid": self.last, "isSidechain": False, "userType": "external"}
        if self.entrypoint:
            rec["entrypoint"] = self.entrypoint
        rec.update(cwd=self.cwd, sessionId=self.sid, version=self.version, gitBranch=self.branch)
        if self.slug and self.last is not None:  # like the real files: no slug on the first record
            rec["slug"] = self.slug
        if kind == "user":
            rec["type"] = "user"
        return rec

    def prompt(self, ts: datetime, text: str, **extra) -> str:
        u = self._uuid()
        if self.last is None:
            self.lines.append(
                {
                    "type": "file-history-snapshot",
                    "messageId": u,
                    "snapshot": {"messageId": u, "trackedFileBackups": {}, "timestamp": iso(ts)},
                    "isSnapshotUpdate": False,
                }
            )
        rec = self._env("user")
        rec["message"] = {"role": "user", "content": text}
        rec.update(extra)
        rec.update(uuid=u, timestamp=iso(ts))
        self.lines.append(rec)
        self.last = u
        return u

    def assistant(self, ts, msg, block, usage, stop=None) -> str:
        u = self._uuid()
        rec = self._env("assistant")
        rec["message"] = {
            "model": self.MODEL,
            "id": "msg_01" + b62(f"{self.sid}/msg/{msg}", 22),
            "type": "message",
            "role": "assistant",
            "content": [block],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": usage,
        }
        rec.update(requestId="req_011C" + b62(f"{self.sid}/req/{msg}", 20), type="assistant", uuid=u,
                   timestamp=iso(ts))
        self.lines.append(rec)
        self.last = u
        return u

    def text(self, ts, msg, text, usage, stop=None) -> str:
        return self.assistant(ts, msg, {"type": "text", "text": text}, usage, stop)

    def tool_use(self, ts, msg, name, inp, usage) -> tuple[str, str]:
        tid = "toolu_01" + b62(f"{self.sid}/toolu/{msg}/{name}", 22)
        a = self.assistant(ts, msg, {"type": "tool_use", "id": tid, "name": name, "input": inp}, usage,
                           "tool_use")
        return tid, a

    def result(self, ts, tid, source, content, tur) -> str:
        u = self._uuid()
        rec = self._env("user")
        rec["message"] = {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result",
                                                       "content": content, "is_error": False}]}
        rec.update(uuid=u, timestamp=iso(ts), toolUseResult=tur, sourceToolAssistantUUID=source)
        self.lines.append(rec)
        self.last = u
        return u

    def path(self) -> Path:
        return HERE / "claude-code" / "projects" / project_key(self.cwd) / f"{self.sid}.jsonl"


def bash_result(stdout: str) -> dict:
    return {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}


def read_result(path: str, body: str) -> tuple[str, dict]:
    lines = body.rstrip("\n").split("\n")
    shown = "\n".join(f"{i + 1:>6}→{ln}" for i, ln in enumerate(lines))
    tur = {"type": "text", "file": {"filePath": path, "content": body, "numLines": len(lines), "startLine": 1,
                                    "totalLines": len(lines)}}
    return shown, tur


# ---------------------------------------------------------------------------------------------
# Codex writer


class Rollout:
    def __init__(self, name, cwd, *, originator, source, cli, model, git, tz=None, meta_lag_ms=40):
        self.name, self.id, self.start, self.cwd = name, CX[name], START[name], cwd
        self.cli, self.model, self.tz, self.originator = cli, model, tz, originator
        self.lines: list[dict] = []
        self.tot = dict(input_tokens=0, cached_input_tokens=0, output_tokens=0, reasoning_output_tokens=0,
                        total_tokens=0)
        self.turn = uuid7(self.start + timedelta(milliseconds=meta_lag_ms + 20), hexs(f"{name}/turn", 3) + "9"
                          + hexs(f"{name}/turn2", 15))
        meta = {"id": self.id, "timestamp": iso(self.start), "cwd": cwd, "originator": originator,
                "cli_version": cli, "source": source, "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent working in the user's repository."},
                "git": git}
        self.emit(self.start + timedelta(milliseconds=meta_lag_ms), "session_meta", meta)

    def emit(self, ts: datetime, kind: str, payload: dict) -> None:
        self.lines.append({"timestamp": iso(ts), "type": kind, "payload": payload})

    def event(self, ts, typ, **kw):
        self.emit(ts, "event_msg", {"type": typ, **kw})

    def item(self, ts, typ, **kw):
        self.emit(ts, "response_item", {"type": typ, **kw})

    def open_turn(self, ts: datetime, prompt: str, sandbox: str, approval: str) -> datetime:
        """task_started, developer/environment messages, turn_context and the user prompt."""
        ms = lambda k: ts + timedelta(milliseconds=k)  # noqa: E731
        started = {"turn_id": self.turn, "model_context_window": 272000}
        if self.tz:
            started = {"turn_id": self.turn, "started_at": epoch_ms(ts) // 1000, "model_context_window": 258400,
                       "collaboration_mode_kind": "default"}
        self.event(ms(0), "task_started", **started)
        self.item(ms(1), "message", role="developer",
                  content=[{"type": "input_text",
                            "text": f"<permissions instructions>\nsandbox_mode is {sandbox}; approval_policy is "
                                    f"{approval}.\n</permissions instructions>"}])
        self.item(ms(2), "message", role="user",
                  content=[{"type": "input_text",
                            "text": f"<environment_context>\n  <cwd>{self.cwd}</cwd>\n  <shell>bash</shell>\n"
                                    "</environment_context>"}])
        ctx = {"turn_id": self.turn, "cwd": self.cwd}
        if self.tz:
            ctx.update(current_date=DAY, timezone=self.tz)
        sp = {"type": sandbox}
        if sandbox == "workspace-write":
            sp.update(writable_roots=[], network_access=False)
        ctx.update(approval_policy=approval, sandbox_policy=sp, model=self.model, effort="medium",
                   summary="auto" if not self.tz else "none")
        self.emit(ms(3), "turn_context", ctx)
        self.item(ms(4), "message", role="user", content=[{"type": "input_text", "text": prompt}])
        um = {"message": prompt, "images": []}
        if self.tz:
            um.update(local_images=[], text_elements=[])
        self.event(ms(5), "user_message", **um)
        return ms(5)

    def tokens(self, ts, inp, cached, out, rsn=0):
        last = dict(input_tokens=inp, cached_input_tokens=cached, output_tokens=out, reasoning_output_tokens=rsn,
                    total_tokens=inp + out)
        for k, v in last.items():
            self.tot[k] += v
        self.event(ts, "token_count", info={"total_token_usage": dict(self.tot), "last_token_usage": last,
                                            "model_context_window": 258400 if self.tz else 272000},
                   rate_limits=None)

    def reasoning(self, ts, summary: str):
        self.item(ts, "reasoning", summary=[{"type": "summary_text", "text": summary}], content=None,
                  encrypted_content="gAAAAABpSynthetic" + b62(f"{self.name}/{iso(ts)}", 40))

    def exec_command(self, ts: datetime, cmd: str, workdir: str, parsed: list, output: str, *, exit_code=0,
                     wall_ms=50, yield_ms=10000, pid="") -> tuple[str, datetime]:
        """exec_command call, its exec_command_end event, then its function_call_output."""
        call = "call_" + b62(f"{self.name}/call/{cmd}", 24)
        self.item(ts, "function_call", name="exec_command",
                  arguments=dumps({"cmd": cmd, "workdir": workdir, "yield_time_ms": yield_ms,
                                   "max_output_tokens": 10000}),
                  call_id=call)
        end = ts + timedelta(milliseconds=wall_ms)
        self.event(end, "exec_command_end", call_id=call, process_id=pid, turn_id=self.turn,
                   command=["/bin/bash", "-lc", cmd], cwd=workdir, parsed_cmd=parsed, source="unified_exec_startup",
                   stdout="", stderr="", aggregated_output=output, exit_code=exit_code,
                   duration={"secs": wall_ms // 1000, "nanos": (wall_ms % 1000) * 1_000_000},
                   formatted_output="", status="completed" if exit_code == 0 else "failed")
        out = (f"Chunk ID: {hexs(call, 6)}\nWall time: {wall_ms / 1000:.4f} seconds\nProcess exited with code "
               f"{exit_code}\nOriginal token count: {max(1, len(output) // 4)}\nOutput:\n{output}")
        self.item(end + timedelta(milliseconds=6), "function_call_output", call_id=call, output=out)
        return call, end + timedelta(milliseconds=6)

    def finish(self, ts: datetime, answer: str):
        phase = {"phase": "final_answer"} if self.tz else {}
        self.event(ts - timedelta(milliseconds=60), "agent_message", message=answer, **phase)
        self.item(ts - timedelta(milliseconds=58), "message", role="assistant",
                  content=[{"type": "output_text", "text": answer}], **phase)
        self.last_answer = answer
        return ts - timedelta(milliseconds=40)

    def complete(self, ts: datetime):
        extra = {}
        if self.tz:
            extra = {"completed_at": epoch_ms(ts) // 1000, "duration_ms": epoch_ms(ts) - epoch_ms(self.start)}
        self.event(ts, "task_complete", turn_id=self.turn, last_agent_message=self.last_answer, **extra)

    def path(self) -> Path:
        stamp = self.start.strftime("%Y-%m-%dT%H-%M-%S")  # UTC here (real rollouts use local time)
        return HERE / "codex" / "sessions" / self.start.strftime("%Y/%m/%d") / f"rollout-{stamp}-{self.id}.jsonl"


GIT_LAMP = {"commit_hash": "9d4e2b7a1c6f08e35b2d9a4c7e1f60b3a8d5c274", "branch": "release/v2",
            "repository_url": "git@github.com:dev/lamp.git"}
GIT_OTHER = {"commit_hash": "2f7a9c0e4b1d8f63a5e2c9b07d4f1a6e3c8b5d90", "branch": "main",
             "repository_url": "git@github.com:dev/other.git"}
EXEC = dict(originator="codex_exec", source="exec", cli="0.77.0", model="gpt-5.1-codex-max")
TUI = dict(originator="codex-tui", source="cli", cli="0.125.0", model="gpt-5.5", tz="Etc/UTC")


def ms_after(t: datetime, ms: int) -> datetime:
    return t + timedelta(milliseconds=ms)


# ---------------------------------------------------------------------------------------------
# the Codex runs

PLAN_BODY = "ship v2\n"
G1_ANSWER = ("notes/plan.md holds a single goal: \"ship v2\". TODO.md was not opened in this run, so the "
             "summary covers the plan only: the next step is the v2 release.")
G7_ANSWER = ("## lamp v2\n\n- Smoother dimmer fades (new easing curve)\n- `lamp schedule` accepts cron "
             "strings\n- Fixed flicker at brightness below 5%")


def codex_runs() -> dict[str, Rollout]:
    runs = {}

    # G1: the true child of G's foreground `codex exec "summarise ..."` (10:00:00 - 10:00:40).
    r = Rollout("G1", LAMP, git=GIT_LAMP, **EXEC)
    t = r.open_turn(ms_after(START["G1"], 48), "summarise TODO.md and notes/plan.md", "read-only", "never")
    r.reasoning(T("10:00:06.140"), "**Reading the plan file**")
    _, t = r.exec_command(T("10:00:06.700"), "sed -n '1,40p' notes/plan.md", LAMP,
                          [{"type": "read", "cmd": "sed -n '1,40p' notes/plan.md", "name": "plan.md",
                            "path": "notes/plan.md"}], PLAN_BODY, wall_ms=52, pid="41207")
    r.tokens(T("10:00:07.110"), 9840, 0, 118, 64)
    r.reasoning(T("10:00:12.330"), "**Summarising**")
    t = r.finish(T("10:00:37.960"), G1_ANSWER)
    r.tokens(t, 10102, 9728, 96, 32)
    r.complete(T("10:00:38.000"))
    runs["G1"] = r

    # G2: exec in ANOTHER cwd, started during G's call.
    r = Rollout("G2", OTHER, git=GIT_OTHER, **EXEC)
    r.open_turn(ms_after(START["G2"], 48), "run go vet and report anything it finds", "read-only", "never")
    r.reasoning(T("10:00:07.420"), "**Running go vet**")
    _, t = r.exec_command(T("10:00:08.010"), "go vet ./...", OTHER, [{"type": "unknown", "cmd": "go vet ./..."}],
                          "", wall_ms=3140, pid="41215")
    r.tokens(ms_after(t, 100), 8120, 0, 74, 32)
    t = r.finish(T("10:00:30.950"), "go vet reports nothing: the packages are clean.")
    r.tokens(t, 8260, 8064, 21, 0)
    r.complete(T("10:00:31.000"))
    runs["G2"] = r

    # G3: exec in lamp, but started BEFORE G's call (09:59:50), still running when it starts.
    r = Rollout("G3", LAMP, git=GIT_LAMP, **EXEC)
    r.open_turn(ms_after(START["G3"], 48), "list uncommitted changes", "read-only", "never")
    r.reasoning(T("09:59:54.210"), "**Checking git status**")
    _, t = r.exec_command(T("09:59:54.800"), "git status --short", LAMP,
                          [{"type": "unknown", "cmd": "git status --short"}], "?? notes/\n", wall_ms=31, pid="41188")
    r.tokens(ms_after(t, 100), 7990, 0, 66, 32)
    t = r.finish(T("10:00:19.950"), "One untracked folder, notes/; nothing else has changed.")
    r.tokens(t, 8100, 7936, 19, 0)
    r.complete(T("10:00:20.000"))
    runs["G3"] = r

    # G4: interactive Codex TUI in lamp, started during G's call.
    r = Rollout("G4", LAMP, git=GIT_LAMP, meta_lag_ms=1870, **TUI)
    r.open_turn(ms_after(START["G4"], 1890), "what is under src?", "workspace-write", "on-request")
    r.reasoning(T("10:00:21.500"), "**Listing src**")
    _, t = r.exec_command(T("10:00:22.100"), "ls src", LAMP,
                          [{"type": "list_files", "cmd": "ls src", "path": "src"}],
                          "cli.py\ndimmer.py\nschedule.py\n", wall_ms=18, pid="51302")
    r.tokens(ms_after(t, 100), 15200, 0, 80, 32)
    t = r.finish(T("10:02:59.950"), "src has three modules: cli.py, dimmer.py and schedule.py.")
    r.tokens(t, 15400, 15104, 24, 0)
    r.complete(T("10:03:00.000"))
    runs["G4"] = r

    # G5: exec in lamp, started after G's call ended (10:00:40).
    r = Rollout("G5", LAMP, git=GIT_LAMP, **EXEC)
    r.open_turn(ms_after(START["G5"], 48), "run the unit tests", "read-only", "never")
    r.reasoning(T("10:05:04.020"), "**Running pytest**")
    _, t = r.exec_command(T("10:05:04.600"), "python -m pytest -q", LAMP,
                          [{"type": "unknown", "cmd": "python -m pytest -q"}], "14 passed in 0.62s\n",
                          wall_ms=1480, pid="41390")
    r.tokens(ms_after(t, 100), 8050, 0, 70, 32)
    t = r.finish(T("10:05:39.950"), "All 14 tests pass.")
    r.tokens(t, 8150, 8064, 12, 0)
    r.complete(T("10:05:40.000"))
    runs["G5"] = r

    # G6: the true child of G's backgrounded `cd sub && nohup codex exec ... &` (10:10:00).
    r = Rollout("G6", SUB, git=GIT_LAMP, **EXEC)
    r.open_turn(ms_after(START["G6"], 48), "lint the sub package", "read-only", "never")
    r.reasoning(T("10:10:08.300"), "**Running ruff**")
    _, t = r.exec_command(T("10:10:08.900"), "ruff check .", SUB, [{"type": "unknown", "cmd": "ruff check ."}],
                          "All checks passed!\n", wall_ms=410, pid="41466")
    r.tokens(ms_after(t, 100), 8200, 0, 68, 32)
    r.reasoning(T("10:10:15.020"), "**Reporting**")
    t = r.finish(T("10:12:29.950"), "ruff finds no problems in the sub package.")
    r.tokens(t, 8330, 8192, 15, 0)
    r.complete(T("10:12:30.000"))
    runs["G6"] = r

    # G7: the true child of G's `codex exec "write the release notes" -o release.md` (10:25:00).
    r = Rollout("G7", LAMP, git=GIT_LAMP, **EXEC)
    r.open_turn(ms_after(START["G7"], 48), "write the release notes", "read-only", "never")
    r.reasoning(T("10:25:07.410"), "**Collecting commits since v1.4.0**")
    _, t = r.exec_command(T("10:25:08.020"), "git log --oneline v1.4.0..HEAD", LAMP,
                          [{"type": "unknown", "cmd": "git log --oneline v1.4.0..HEAD"}],
                          "e41c9a2 dimmer: ease fades with a cubic curve\n7b03d5f schedule: parse cron strings\n"
                          "2a9f6c1 fix: flicker below 5% brightness\n", wall_ms=27, pid="41512")
    r.tokens(ms_after(t, 100), 8420, 0, 102, 64)
    t = r.finish(T("10:25:54.950"), G7_ANSWER)
    r.tokens(t, 8610, 8448, 88, 16)
    r.complete(T("10:25:55.000"))
    runs["G7"] = r
    return runs


# ---------------------------------------------------------------------------------------------
# Claude K (the `claude -p` child of H) and L (interactive look-alike)

K_PROMPT = "Review notes/plan.md for typos"
K_ANSWER = "No typos: /home/dev/projects/lamp/notes/plan.md is one line, \"ship v2\", spelled correctly."


def claude_k() -> tuple[Claude, dict]:
    k = Claude(S_K, OTHER, "main", entrypoint="sdk-cli")
    k.prompt(T("11:00:12.000"), K_PROMPT, promptSource="sdk", permissionMode="default")
    u1, u2 = cusage(3, 9, 0, 9800), cusage(3, 74, 0, 9800)
    k.text(T("11:00:14.500"), "k1", "There is no notes/ folder in this directory; the lamp checkout next to it "
                                    "has notes/plan.md, so I'll review that one.", u1)
    path = LAMP + "/notes/plan.md"
    tid, a = k.tool_use(T("11:00:15.000"), "k1", "Read", {"file_path": path}, u2)
    shown, tur = read_result(path, PLAN_BODY)
    k.result(T("11:00:15.050"), tid, a, shown, tur)
    k.text(T("11:00:25.000"), "k2", K_ANSWER, cusage(5, 38, 9800, 120), "end_turn")
    usage = {"input_tokens": 8, "cache_creation_input_tokens": 9920, "cache_read_input_tokens": 9800,
             "output_tokens": 112}
    result = {"type": "result", "subtype": "success", "is_error": False, "duration_ms": 13400,
              "duration_api_ms": 11870, "num_turns": 2, "result": K_ANSWER, "session_id": S_K,
              "total_cost_usd": 0.0712, "usage": usage}
    return k, {"read_call": tid, "result": result}


def claude_l() -> Claude:
    ll = Claude(S_L, OTHER, "main", entrypoint="cli", slug="mellow-drifting-kettle")
    ll.prompt(T("11:00:14.000"), "how do I pin the Go toolchain version for this module?", permissionMode="default")
    ll.text(T("11:00:19.800"), "l1", "Add a `toolchain go1.23.4` line under the `go` directive in go.mod; "
                                     "`go mod tidy` keeps it, and older toolchains will download that one.",
            cusage(3, 61, 0, 8400), "end_turn")
    return ll


# ---------------------------------------------------------------------------------------------
# H: Codex TUI that runs `claude -p ... --output-format json`


H_CMD = f"claude -p \"{K_PROMPT}\" --output-format json"


def codex_h(k_result: dict) -> tuple[Rollout, str]:
    r = Rollout("H", OTHER, git=GIT_OTHER, meta_lag_ms=180, **TUI)
    r.open_turn(ms_after(START["H"], 200), "ask claude in print mode to check the lamp plan for typos",
                "workspace-write", "on-request")
    r.event(T("11:00:00.410"), "token_count", info=None,
            rate_limits={"primary": {"used_percent": 6.0, "window_minutes": 300, "resets_at": 1767620000},
                         "secondary": None})
    r.reasoning(T("11:00:09.380"), "**Running claude in print mode**")
    call = "call_" + b62("H/call/claude", 24)
    r.item(T("11:00:10.000"), "function_call", name="exec_command",
           arguments=dumps({"cmd": H_CMD, "workdir": OTHER, "yield_time_ms": 30000, "max_output_tokens": 10000}),
           call_id=call)
    r.tokens(T("11:00:10.220"), 15600, 0, 140, 64)
    out = dumps(k_result) + "\n"
    r.event(T("11:00:30.000"), "exec_command_end", call_id=call, process_id="51877", turn_id=r.turn,
            command=["/bin/bash", "-lc", H_CMD], cwd=OTHER, parsed_cmd=[{"type": "unknown", "cmd": H_CMD}],
            source="unified_exec_startup", stdout="", stderr="", aggregated_output=out, exit_code=0,
            duration={"secs": 20, "nanos": 0}, formatted_output="", status="completed")
    r.item(T("11:00:30.006"), "function_call_output", call_id=call,
           output=f"Chunk ID: {hexs(call, 6)}\nWall time: 20.0000 seconds\nProcess exited with code 0\n"
                  f"Original token count: {len(out) // 4}\nOutput:\n{out}")
    r.tokens(T("11:00:30.300"), 16100, 15488, 52, 0)
    t = r.finish(T("11:00:33.950"), "Claude found no typos: lamp's notes/plan.md is just \"ship v2\".")
    r.tokens(t, 16240, 16128, 20, 0)
    r.complete(T("11:00:34.000"))
    return r, call


# ---------------------------------------------------------------------------------------------
# G: the Claude lead


def claude_g(runs: dict[str, Rollout]) -> tuple[Claude, dict]:
    g = Claude(S_G, LAMP, "release/v2", slug="steady-glowing-wick")
    calls = {}
    g.prompt(T("09:58:00.000"), "Get the v2 release moving: check TODO.md, record the plan in notes/plan.md, and "
                                "ask codex to summarise both.", permissionMode="default")
    g.text(T("09:58:08.600"), "g1", "Reading TODO.md first.", cusage(3, 7, 0, 14200))
    todo = LAMP + "/TODO.md"
    tid, a = g.tool_use(T("09:58:10.000"), "g1", "Read", {"file_path": todo}, cusage(3, 68, 0, 14200))
    shown, tur = read_result(todo, "- fix flicker below 5% brightness\n- cron strings in `lamp schedule`\n- ship v2\n")
    g.result(T("09:58:10.050"), tid, a, shown, tur)
    calls["read_todo"] = tid

    g.text(T("09:58:57.300"), "g2", "The last TODO item is the release itself. Writing the plan.",
           cusage(5, 12, 14200, 260))
    cmd_b = 'mkdir -p notes && echo "ship v2" > notes/plan.md'
    tid, a = g.tool_use(T("09:59:00.000"), "g2", "Bash", {"command": cmd_b, "description": "Write notes/plan.md"},
                        cusage(5, 104, 14200, 260))
    g.result(T("09:59:01.000"), tid, a, "", bash_result(""))
    calls["write_plan"] = tid

    cmd_c = 'codex exec "summarise TODO.md and notes/plan.md"'
    tid, a = g.tool_use(T("10:00:00.000"), "g3", "Bash",
                        {"command": cmd_c, "description": "Ask codex for a summary", "timeout": 300000},
                        cusage(4, 97, 14460, 180))
    g.result(T("10:00:40.000"), tid, a, G1_ANSWER, bash_result(G1_ANSWER))
    calls["c"] = tid
    g.text(T("10:00:44.200"), "g4", "Codex agrees: the plan is the v2 release.", cusage(4, 15, 14640, 150),
           "end_turn")

    g.prompt(T("10:09:50.000"), "lint the sub package with codex in the background", permissionMode="default")
    cmd_d = 'cd sub && nohup codex exec "lint the sub package" > /tmp/lint.log 2>&1 &'
    tid, a = g.tool_use(T("10:10:00.000"), "g5", "Bash",
                        {"command": cmd_d, "description": "Lint sub with codex in the background"},
                        cusage(3, 88, 14790, 120))
    g.result(T("10:10:01.000"), tid, a, "", bash_result(""))
    calls["d"] = tid
    g.text(T("10:10:03.400"), "g6", "The lint is running in the background; its log goes to /tmp/lint.log.",
           cusage(4, 19, 14910, 90), "end_turn")

    g.prompt(T("10:19:50.000"), "have a subagent check CHANGELOG.md for v2", permissionMode="default")
    task_prompt = ("Check /home/dev/projects/lamp/CHANGELOG.md for a v2 section and list the changes since "
                   "v1.4.0 that it is missing. Do not edit anything.")
    tid, a = g.tool_use(T("10:20:00.000"), "g7", "Task",
                        {"description": "Check changelog for v2", "prompt": task_prompt,
                         "subagent_type": "general-purpose"}, cusage(3, 121, 15000, 110))
    body = "CHANGELOG.md has no v2 section yet; the dimmer easing, cron schedules and the flicker fix are missing."
    tail = "agentId: deadbee (for resuming to continue this agent's work if needed)"
    g.result(T("10:21:00.000"), tid, a, [{"type": "text", "text": body}, {"type": "text", "text": tail}],
             {"status": "completed", "prompt": task_prompt, "agentId": "deadbee",
              "content": [{"type": "text", "text": body}], "totalDurationMs": 58700, "totalTokens": 21480,
              "totalToolUseCount": 3, "usage": cusage(6, 214, 20300, 960)})
    calls["task"] = tid
    g.text(T("10:21:03.100"), "g8", "The changelog needs a v2 section covering three changes.",
           cusage(4, 16, 15110, 330), "end_turn")

    g.prompt(T("10:24:50.000"), "have codex write the release notes into release.md", permissionMode="default")
    cmd_f = 'codex exec "write the release notes" -o release.md'
    tid, a = g.tool_use(T("10:25:00.000"), "g9", "Bash",
                        {"command": cmd_f, "description": "Draft release notes with codex", "timeout": 300000},
                        cusage(3, 92, 15440, 100))
    g7 = runs["G7"]
    tokens_used = f"{g7.tot['total_tokens']:,}"
    stdout = (f"OpenAI Codex v0.77.0 (research preview)\n--------\nworkdir: {LAMP}\nmodel: gpt-5.1-codex-max\n"
              f"provider: openai\napproval: never\nsandbox: read-only\nreasoning effort: medium\n"
              f"reasoning summaries: auto\nsession id: {g7.id}\n--------\nuser\nwrite the release notes\n\n"
              f"codex\n{G7_ANSWER}\ntokens used\n{tokens_used}")
    g.result(T("10:26:00.000"), tid, a, stdout, bash_result(stdout))
    calls["f"] = tid
    g.text(T("10:27:00.000"), "g10", "Done: notes/plan.md is written, the sub lint runs in the background, "
                                     "CHANGELOG.md still needs a v2 section, and codex wrote the release notes "
                                     "to release.md.", cusage(4, 41, 15540, 420), "end_turn")
    return g, calls


# ---------------------------------------------------------------------------------------------
# expected facts


def cc(sid: str) -> str:
    return f"claude-code:{sid}"


def cx(name: str) -> str:
    return f"codex:{CX[name]}"


def expected(g_calls, k_info, h_call, runs) -> dict:
    g1_read = next(ln["payload"]["call_id"] for ln in runs["G1"].lines
                   if ln["payload"].get("type") == "exec_command_end")
    plan = LAMP + "/notes/plan.md"
    return {
        "about": "Expected lineage for sample_logs/scenarios/launch-lamp (synthetic; written by _generate.py). "
                 "Tiers: verified > heuristic > reported; an artifact edge takes the weaker tier of its two ends.",
        "sessions": {"G": cc(S_G), "G1": cx("G1"), "G2": cx("G2"), "G3": cx("G3"), "G4": cx("G4"), "G5": cx("G5"),
                     "G6": cx("G6"), "G7": cx("G7"), "H": cx("H"), "K": cc(S_K), "L": cc(S_L)},
        "edges": [
            {"kind": "launch", "src": cc(S_G), "dst": cx("G1"), "tier": "heuristic", "src_call_id": g_calls["c"]},
            {"kind": "launch", "src": cc(S_G), "dst": cx("G6"), "tier": "heuristic", "src_call_id": g_calls["d"]},
            {"kind": "launch", "src": cc(S_G), "dst": cx("G7"), "tier": "verified", "src_call_id": g_calls["f"]},
            {"kind": "launch", "src": cx("H"), "dst": cc(S_K), "tier": "verified", "src_call_id": h_call},
            {"kind": "artifact", "src": cc(S_G), "dst": cx("G1"), "tier": "heuristic", "path": plan, "version": 1,
             "src_tier": "heuristic", "dst_tier": "heuristic", "src_call_id": g_calls["write_plan"],
             "dst_call_id": g1_read},
            {"kind": "artifact", "src": cc(S_G), "dst": cc(S_K), "tier": "heuristic", "path": plan, "version": 1,
             "src_tier": "heuristic", "dst_tier": "verified", "src_call_id": g_calls["write_plan"],
             "dst_call_id": k_info["read_call"]},
        ],
        "not_edges": [
            {"kind": "launch", "src": cc(S_G), "dst": cx("G2"),
             "why": "started during call (c) but its cwd is /home/dev/projects/other, not lamp"},
            {"kind": "launch", "src": cc(S_G), "dst": cx("G3"),
             "why": "same cwd, but started 09:59:50, before call (c) began at 10:00:00"},
            {"kind": "launch", "src": cc(S_G), "dst": cx("G4"),
             "why": "interactive (codex-tui / source cli): never the child of a print-mode `codex exec` call"},
            {"kind": "launch", "src": cc(S_G), "dst": cx("G5"),
             "why": "started 10:05:00, after call (c) ended at 10:00:40 (+5 s slack); not in sub, so not call (d)"},
            {"kind": "launch", "src": cx("H"), "dst": cc(S_L),
             "why": "interactive (entrypoint cli) and its id is not the session_id in the call's output"},
            {"kind": "spawn", "src": cc(S_G), "dst": "*",
             "why": "the Task's agentId deadbee has no transcript: no spawn edge to any session"},
        ],
        "dangling_spawns": [{"session": cc(S_G), "call_id": g_calls["task"], "agentId": "deadbee",
                             "tool": "Task", "subagent_type": "general-purpose"}],
        "unwritten_reads": [{"session": cc(S_G), "path": LAMP + "/TODO.md", "tier": "verified",
                             "call_id": g_calls["read_todo"]}],
        "unread_writes": [
            {"path": LAMP + "/release.md", "writer": cx("G7"), "how": "codex -o", "tier": "heuristic",
             "call_id": g_calls["f"],
             "note": "written by the launched codex on exit; the shell call is G's, the write is G7's"},
            {"path": "/tmp/lint.log", "writer": cc(S_G), "how": ">", "tier": "heuristic", "call_id": g_calls["d"]},
        ],
    }


def expected_md(exp: dict, files: dict[str, Path], g_calls: dict, h_call: str) -> str:
    rel = {k: v.relative_to(HERE).as_posix() for k, v in files.items()}
    s = exp["sessions"]
    role = {
        "G": "Claude Code lead (interactive, 2.1.39, cwd lamp, 09:58:00-10:27:00): Read TODO.md, shell write of "
             "notes/plan.md, launches (c) (d) (f), dangling Task",
        "G1": "**true child** of call (c): `codex_exec`/`exec` 0.77.0, cwd lamp, 10:00:02.500-10:00:38; "
              "`sed -n` read of notes/plan.md (`parsed_cmd` read)",
        "G2": "distractor: `codex exec`, cwd **other**, starts 10:00:03 (inside call (c))",
        "G3": "distractor: `codex exec`, cwd lamp, starts 09:59:50 (**before** call (c)), ends 10:00:20",
        "G4": "distractor: **interactive** `codex-tui`/`cli` 0.125.0, cwd lamp, starts 10:00:05 (inside call (c))",
        "G5": "distractor: `codex exec`, cwd lamp, starts 10:05:00 (**after** call (c) ended)",
        "G6": "**true child** of backgrounded call (d): `codex exec`, cwd lamp/sub, 10:10:04-10:12:30",
        "G7": "**true child** of call (f): `codex exec`, cwd lamp, 10:25:03-10:25:55; its id is in (f)'s stdout",
        "H": "Codex **as launcher**: `codex-tui`/`cli` 0.125.0, cwd other, 11:00:00-11:00:34; `exec_command` "
             "`claude -p ... --output-format json` 11:00:10-11:00:30",
        "K": "**true child** of H's call: Claude `entrypoint: sdk-cli`, `promptSource: sdk`, cwd other, "
             "11:00:12-11:00:25; Read of lamp/notes/plan.md",
        "L": "distractor: interactive Claude (`entrypoint: cli`), cwd other, starts 11:00:14 (inside H's call)",
    }
    out = [
        "# Scenario launch-lamp: expected lineage",
        "",
        "Synthetic logs written by `_generate.py` (run it to rewrite them byte for byte). Machine-readable "
        "twin: `expected.json`. All times are 2026-01-05 UTC. Codex rollout filenames use UTC here (real "
        "ones use local time; `turn_context.timezone` is `Etc/UTC` where present). Tiers, strongest first: "
        "verified > heuristic > reported; an artifact edge takes the weaker tier of its two ends.",
        "",
        "## Sessions",
        "",
        "| name | file | session id | role |",
        "|---|---|---|---|",
    ]
    for name in ("G", "G1", "G2", "G3", "G4", "G5", "G6", "G7", "H", "K", "L"):
        out.append(f"| {name} | `{rel[name]}` | `{s[name]}` | {role[name]} |")
    out += [
        "",
        "## The lead's calls (G)",
        "",
        "| step | tool_use id | time (call .. result) | input | output |",
        "|---|---|---|---|---|",
        f"| a | `{g_calls['read_todo']}` | 09:58:10.000 .. 09:58:10.050 | Read `/home/dev/projects/lamp/TODO.md` "
        "| file content (no logged session wrote it) |",
        f"| b | `{g_calls['write_plan']}` | 09:59:00.000 .. 09:59:01.000 | Bash `mkdir -p notes && echo \"ship v2\" "
        "> notes/plan.md` | empty |",
        f"| c | `{g_calls['c']}` | 10:00:00.000 .. 10:00:40.000 | Bash `codex exec \"summarise TODO.md and "
        "notes/plan.md\"` | stdout = G1's final answer only, `stderr: \"\"` (no session id anywhere) |",
        f"| d | `{g_calls['d']}` | 10:10:00.000 .. 10:10:01.000 | Bash `cd sub && nohup codex exec \"lint the sub "
        "package\" > /tmp/lint.log 2>&1 &` | empty (returns at once) |",
        f"| e | `{g_calls['task']}` | 10:20:00.000 .. 10:21:00.000 | Task (`general-purpose`) | "
        "`toolUseResult.agentId: deadbee` + text tail; no child file exists |",
        f"| f | `{g_calls['f']}` | 10:25:00.000 .. 10:26:00.000 | Bash `codex exec \"write the release notes\" -o "
        "release.md` | codex banner with `session id: " + CX["G7"] + "` |",
        "",
        "## Edges a correct inference produces",
        "",
        "| kind | src | dst | tier | path | why |",
        "|---|---|---|---|---|---|",
        "| launch | G | G1 | heuristic | | call (c) is a print-mode `codex exec`; G1 is `codex_exec`/`exec` "
        "(marker), cwd = lamp = the call's cwd, starts 10:00:02.5 inside 10:00:00-10:00:40; the output holds no "
        "id, so it cannot be verified. G2/G3/G4 are the other candidates and are all excluded (below) |",
        "| launch | G | G6 | heuristic | | call (d) is backgrounded (`nohup ... &`, result after 1 s), so the "
        "window is the call start + 30 min; the effective cwd is lamp/sub from `cd sub`; G6 is the only exec "
        "session in lamp/sub, starting 10:10:04 |",
        "| launch | G | G7 | verified | | `session id: <G7>` appears in call (f)'s `toolUseResult.stdout` (also "
        "same cwd, starts 10:25:03 inside 10:25:00-10:26:00) |",
        "| launch | H | K | verified | | H's `exec_command` runs `claude -p ... --output-format json`; its "
        "`exec_command_end.aggregated_output` (and `function_call_output`) is the result object whose "
        "`session_id` is K; K is `sdk-cli` in cwd other, starts 11:00:12 inside 11:00:10-11:00:30. Codex as "
        "the launcher |",
        "| artifact | G | G1 | heuristic | `/home/dev/projects/lamp/notes/plan.md` (version 1) | write end "
        "heuristic (G's shell `>` at 09:59:01); read end heuristic: G1's `sed -n` read is both Codex's own "
        "`parsed_cmd` (reported) and our parse of the command (heuristic), and the stronger of the two counts |",
        "| artifact | G | K | heuristic | `/home/dev/projects/lamp/notes/plan.md` (version 1) | write end "
        "heuristic (shell `>`), read end verified (K's Read tool at 11:00:15): the weaker end |",
        "",
        "## Must NOT match",
        "",
        "| kind | src | dst | why |",
        "|---|---|---|---|",
        "| launch | G | G2 | started inside call (c) but cwd is /home/dev/projects/other |",
        "| launch | G | G3 | cwd lamp but started at 09:59:50, before call (c) (10:00:00); a child never starts "
        "before its launch |",
        "| launch | G | G4 | interactive Codex (`codex-tui`, `source: cli`): never the child of a print-mode call, "
        "although it is in lamp and starts at 10:00:05 |",
        "| launch | G | G5 | starts at 10:05:00, after call (c) ended at 10:00:40 (+5 s slack); call (d)'s "
        "background window covers lamp/sub only |",
        "| launch | H | L | interactive Claude (`entrypoint: cli`) although it is in cwd other and starts at "
        "11:00:14 inside H's call; and its id is not the `session_id` printed |",
        "| spawn | G | any | the Task result names agentId `deadbee` but no `agent-deadbee.jsonl` exists |",
        "",
        "## Other facts",
        "",
        f"- **Dangling spawn** in G: Task `{g_calls['task']}` -> agentId `deadbee` (status completed), no child "
        f"transcript under `{S_G}/subagents/`.",
        "- **Read of an unwritten file** in G: Read `/home/dev/projects/lamp/TODO.md` (verified read; no logged "
        "session ever writes it).",
        "- **Write with no reader**: `/home/dev/projects/lamp/release.md`, written by `codex exec -o` on exit; the "
        "write belongs to **G7** (the launched session), not to G whose shell ran the command (tier heuristic: "
        "parsed from the command line). Nobody reads it.",
        "- **Write with no reader**: `/tmp/lint.log`, G's shell redirection in call (d) (heuristic).",
        "- G1 does not read TODO.md (its only command is the `sed -n` of the plan), so the only reads of TODO.md "
        "and notes/plan.md are the ones listed above.",
        "",
        "## Notes on choices",
        "",
        "- G1's read command `sed -n '1,40p' notes/plan.md` is seen twice: Codex's own `parsed_cmd` (reported) "
        "and sessiongraph's parse of the command line (heuristic). The same touch keeps its strongest tier, so "
        "the read end, and with it the G -> G1 edge, is **heuristic**.",
        "- All Claude transcripts say `version: 2.1.39`; K and L carry `entrypoint` although the real 2.1.39 "
        "files seen so far lack it (it appears in later builds). G has no `entrypoint`.",
        "- G4 and H are `codex-tui` 0.125.0 (0.125-style `task_started`/`turn_context` with `timezone`); the exec "
        "runs are 0.77.0 with unified `exec_command` + `exec_command_end`.",
        "- Call (c)'s stdout is only the final message (as when the banner on stderr is not captured); call (f)'s "
        "stdout carries the banner (as when stderr is merged), like the ink_well sample.",
        "- No `progress`/`agent_progress` records are written for the dangling Task, so nothing but the result's "
        "`agentId` names the missing child.",
        "",
    ]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# write + check


def write_jsonl(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for ln in lines:
            fh.write(dumps(ln) + "\n")


def check(files: dict[str, Path]) -> None:
    for name, path in files.items():
        data = path.read_bytes()
        assert data.endswith(b"\n"), path
        prev = None
        recs = [json.loads(line) for line in data.decode("utf-8").split("\n")[:-1]]
        for rec in recs:
            ts = rec.get("timestamp")
            if ts is None:
                continue
            assert prev is None or ts > prev, (path, prev, ts)
            prev = ts
        if "codex" in path.relative_to(HERE).parts[:1]:
            meta = recs[0]
            assert meta["type"] == "session_meta", path
            pid, start = meta["payload"]["id"], meta["payload"]["timestamp"]
            assert path.name.endswith(f"-{pid}.jsonl"), path
            dt = datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
            assert path.name.startswith("rollout-" + dt.strftime("%Y-%m-%dT%H-%M-%S") + "-"), path
            assert path.parent.as_posix().endswith(dt.strftime("%Y/%m/%d")), path
            assert int(pid.replace("-", "")[:12], 16) == epoch_ms(dt), path
            assert pid[14] == "7", path
        else:
            sid = path.stem
            for rec in recs:
                if "uuid" in rec:
                    assert rec["sessionId"] == sid and rec["cwd"] and rec["version"] == "2.1.39", path
                    for key in ("parentUuid", "isSidechain", "userType", "gitBranch", "type", "message"):
                        assert key in rec, (path, key)
                    if rec["type"] == "assistant":
                        assert rec["requestId"] and rec["message"]["usage"]["cache_creation"], path


def main() -> None:
    for sub in ("claude-code", "codex"):
        shutil.rmtree(HERE / sub, ignore_errors=True)
    runs = codex_runs()
    k, k_info = claude_k()
    h, h_call = codex_h(k_info["result"])
    runs["H"] = h
    g, g_calls = claude_g(runs)
    ll = claude_l()
    files: dict[str, Path] = {}
    for name, c in (("G", g), ("K", k), ("L", ll)):
        files[name] = c.path()
        write_jsonl(files[name], c.lines)
    for name, r in runs.items():
        files[name] = r.path()
        write_jsonl(files[name], r.lines)
    exp = expected(g_calls, k_info, h_call, runs)
    (HERE / "expected.json").write_text(json.dumps(exp, indent=1) + "\n", encoding="utf-8")
    (HERE / "EXPECTED.md").write_text(expected_md(exp, files, g_calls, h_call), encoding="utf-8")
    check(files)
    for name in sorted(files, key=lambda n: (len(n), n)):
        print(f"{name:3} {exp['sessions'][name]:60} {files[name].relative_to(HERE)}")


if __name__ == "__main__":
    main()
