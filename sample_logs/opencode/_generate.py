"""Writes the opencode JSON storage tree under ``storage/`` (see README.md).

Every id, path, prompt and count is made up; the shapes follow section 5 of
shared/specs/harness-log-formats.md: ``session/<projectID>/<sessionID>.json``,
``message/<sessionID>/<messageID>.json`` and ``part/<messageID>/<partID>.json``, times in Unix
milliseconds. Deterministic: ``python _generate.py`` rewrites the same bytes.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
STORAGE = HERE / "storage"

ROOT = "/home/dev/projects/harbor"
PROJECT = "5e1c9a0b7d3f2e4a6c8b0d1f3e5a7c9b1d3f5e7a"
PARENT = "ses_4a1f0c2e7ffeP7xQ2mNbV9kLd3"
CHILD = "ses_4a1f0c3b1ffeC8yR3nOcW0lMe4"
ORPHAN = "ses_4a1f0e00affeOr9hAnQpX2sTu6"
GONE_PARENT = "ses_49f00000000eGoneParent0001"
NEVER_WRITTEN = "ses_4a1f0d99dffeNoFile0000000a"
SURVEY = "List every retry or backoff helper in harbor/ and write what you find to docs/retry-survey.md"
VERSION = "1.0.134"


def ms(day: str, hms: str) -> int:
    return int(datetime.fromisoformat(f"{day}T{hms}+00:00").timestamp() * 1000)


def t(hms: str) -> int:
    return ms("2025-11-18", hms)


class Writer:
    def __init__(self) -> None:
        self.n = 0

    def ident(self, prefix: str, stamp: int, tag: str) -> str:
        """opencode-like ids: prefix, 12 hex of time and counter, 14 base62 characters."""
        self.n += 1
        return f"{prefix}_{stamp:011x}{self.n % 16:x}{tag:0<14}"[: len(prefix) + 27]

    def put(self, rel: str, obj: dict) -> None:
        path = STORAGE / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(obj, indent=2) + "\n", encoding="utf-8")

    def session(self, sid: str, title: str, created: int, updated: int, parent: str | None = None) -> None:
        info = {"id": sid, "version": VERSION, "projectID": PROJECT, "directory": ROOT}
        if parent:
            info["parentID"] = parent
        info.update({"title": title, "time": {"created": created, "updated": updated}})
        self.put(f"session/{PROJECT}/{sid}.json", info)

    def message(self, sid: str, role: str, created: int, completed: int | None = None, *, parent_msg: str | None = None,
                model: str = "claude-sonnet-4-5", agent: str = "build", tokens: dict | None = None,
                cost: float = 0.0, tag: str) -> str:
        mid = self.ident("msg", created, tag)
        if role == "user":
            obj = {"id": mid, "sessionID": sid, "role": "user", "time": {"created": created}, "agent": agent,
                   "model": {"providerID": "anthropic", "modelID": model}}
        else:
            obj = {"id": mid, "sessionID": sid, "role": "assistant", "time": {"created": created, "completed": completed},
                   "parentID": parent_msg, "modelID": model, "providerID": "anthropic", "mode": agent, "agent": agent,
                   "path": {"cwd": ROOT, "root": ROOT}, "cost": cost, "tokens": tokens, "finish": "tool-calls"}
        self.put(f"message/{sid}/{mid}.json", obj)
        return mid

    def part(self, sid: str, mid: str, stamp: int, body: dict, tag: str) -> None:
        pid = self.ident("prt", stamp, tag)
        self.put(f"part/{mid}/{pid}.json", {"id": pid, "sessionID": sid, "messageID": mid, **body})

    def text(self, sid: str, mid: str, stamp: int, text: str, tag: str) -> None:
        self.part(sid, mid, stamp, {"type": "text", "text": text, "time": {"start": stamp, "end": stamp}}, tag)

    def tool(self, sid: str, mid: str, tool: str, call_id: str, inp: dict, start: int, end: int, *,
             output: str = "", metadata: dict | None = None, status: str = "completed", title: str = "",
             error: str | None = None, tag: str) -> None:
        state = {"status": status, "input": inp}
        if status == "error":
            state.update({"error": error, "time": {"start": start, "end": end}})
        else:
            state.update({"output": output, "title": title, "metadata": metadata or {},
                          "time": {"start": start, "end": end}})
        self.part(sid, mid, start, {"type": "tool", "callID": call_id, "tool": tool, "state": state}, tag)

    def step(self, sid: str, mid: str, stamp: int, kind: str, tag: str, tokens: dict | None = None) -> None:
        body = {"type": kind}
        if kind == "step-finish":
            body.update({"reason": "tool-calls", "cost": 0, "tokens": tokens})
        self.part(sid, mid, stamp, body, tag)


def tok(inp: int, out: int, reasoning: int, read: int, write: int) -> dict:
    return {"input": inp, "output": out, "reasoning": reasoning, "cache": {"read": read, "write": write}}


def main() -> None:
    if STORAGE.exists():
        shutil.rmtree(STORAGE)
    w = Writer()
    w.put(f"project/{PROJECT}.json", {"id": PROJECT, "worktree": ROOT, "vcs": "git",
                                      "time": {"created": t("09:58:00.000"), "initialized": t("09:58:01.000")}})

    # -- the parent session -------------------------------------------------------------------
    w.session(PARENT, "Add retries to the sync client", t("10:00:00.000"), t("10:02:30.000"))
    u1 = w.message(PARENT, "user", t("10:00:00.500"), tag="PUserAsk01")
    w.text(PARENT, u1, t("10:00:00.500"),
           "Add retries with backoff to harbor/sync.py. Have a subagent survey the existing retry helpers first.",
           "PUserText01")
    a1 = w.message(PARENT, "assistant", t("10:00:02.000"), t("10:00:41.000"), parent_msg=u1,
                   tokens=tok(14, 296, 0, 0, 18432), cost=0.0736, tag="PAsst01")
    w.step(PARENT, a1, t("10:00:02.100"), "step-start", "PStep01")
    w.text(PARENT, a1, t("10:00:02.900"), "I'll have an explore subagent look for existing helpers first.", "PText01")
    w.tool(PARENT, a1, "task", "toolu_01TaskSurveyHelpers", {
        "description": "Survey retry helpers", "prompt": SURVEY, "subagent_type": "explore"},
        t("10:00:03.100"), t("10:00:40.500"),
        output=f"One helper: harbor/util/backoff.py (exponential, no jitter). Notes in docs/retry-survey.md.\n\n"
               f"<task_metadata>\nsession_id: {CHILD}\n</task_metadata>",
        metadata={"sessionId": CHILD, "summary": [{"id": "prt_x", "tool": "read", "state": {"status": "completed"}}],
                  "model": {"providerID": "anthropic", "modelID": "claude-haiku-4-5"}},
        title="Survey retry helpers", tag="PTask01")
    w.step(PARENT, a1, t("10:00:40.900"), "step-finish", "PStep02", tok(14, 296, 0, 0, 18432))

    a2 = w.message(PARENT, "assistant", t("10:00:42.000"), t("10:01:20.000"), parent_msg=u1,
                   tokens=tok(9, 820, 0, 18432, 2210), cost=0.0261, tag="PAsst02")
    w.tool(PARENT, a2, "read", "toolu_01ReadSurveyNotes", {"filePath": f"{ROOT}/docs/retry-survey.md"},
           t("10:00:43.000"), t("10:00:43.050"), output="<file>\n00001| # Retry survey\n</file>",
           title="docs/retry-survey.md", tag="PRead01")
    w.tool(PARENT, a2, "edit", "toolu_01EditSyncClient", {
        "filePath": f"{ROOT}/harbor/sync.py", "oldString": "resp = session.post(url, json=batch)",
        "newString": "resp = with_backoff(lambda: session.post(url, json=batch))"},
        t("10:00:50.000"), t("10:00:50.200"), metadata={"diagnostics": {}}, title="harbor/sync.py", tag="PEdit01")
    w.tool(PARENT, a2, "read", "toolu_01ReadOldRetry", {"filePath": "harbor/retry_old.py"},
           t("10:00:55.000"), t("10:00:55.010"), status="error",
           error=f"File not found: {ROOT}/harbor/retry_old.py", tag="PRead02")
    w.tool(PARENT, a2, "bash", "toolu_01BashSyncTests", {
        "command": "pytest -q tests/test_sync.py", "description": "Run the sync tests"},
        t("10:01:02.000"), t("10:01:05.400"), output="9 passed in 0.52s\n",
        metadata={"output": "9 passed in 0.52s\n", "exit": 0, "description": "Run the sync tests"},
        title="pytest -q tests/test_sync.py", tag="PBash01")

    a3 = w.message(PARENT, "assistant", t("10:01:21.000"), t("10:02:10.000"), parent_msg=u1,
                   tokens=tok(6, 544, 0, 20642, 1380), cost=0.0149, tag="PAsst03")
    w.tool(PARENT, a3, "task", "toolu_01TaskBenchBackoff", {
        "description": "Benchmark backoff", "prompt": "Time harbor.sync.push with 3 retries against the fake server",
        "subagent_type": "general"},
        t("10:01:22.000"), t("10:01:58.000"), output=f"task_id: {NEVER_WRITTEN}\n\nMedian 41 ms per push.",
        metadata={"sessionId": NEVER_WRITTEN}, title="Benchmark backoff", tag="PTask02")
    w.tool(PARENT, a3, "apply_patch", "toolu_01PatchConfig", {
        "patchText": "*** Begin Patch\n*** Update File: harbor/config.py\n@@\n-RETRIES = 0\n+RETRIES = 3\n"
                     "*** Add File: docs/retry.md\n+# Retries\n+\n+harbor retries a push 3 times.\n*** End Patch"},
        t("10:02:00.000"), t("10:02:00.300"), output="Success. Updated the following files:\nM harbor/config.py\nA docs/retry.md",
        title="2 files", tag="PPatch01")

    a4 = w.message(PARENT, "assistant", t("10:02:12.000"), t("10:02:30.000"), parent_msg=u1,
                   tokens=tok(4, 61, 0, 22022, 0), cost=0.0076, tag="PAsst04")
    w.text(PARENT, a4, t("10:02:12.500"), "Retries are in: harbor/sync.py uses with_backoff, RETRIES = 3.", "PText02")

    # -- the child the first task call created --------------------------------------------------
    w.session(CHILD, "Survey retry helpers (@explore subagent)", t("10:00:03.400"), t("10:00:39.900"), parent=PARENT)
    c1 = w.message(CHILD, "user", t("10:00:03.500"), agent="explore", model="claude-haiku-4-5", tag="CUser01")
    w.text(CHILD, c1, t("10:00:03.500"), SURVEY, "CUserText01")
    c2 = w.message(CHILD, "assistant", t("10:00:04.000"), t("10:00:36.000"), parent_msg=c1,
                   model="claude-haiku-4-5", agent="explore", tokens=tok(20, 410, 0, 0, 9100), cost=0.0117, tag="CAsst01")
    w.tool(CHILD, c2, "glob", "toolu_01GlobRetry", {"pattern": "**/*retry*", "path": ROOT},
           t("10:00:05.000"), t("10:00:05.040"), output="No files found", title="", tag="CGlob01")
    w.tool(CHILD, c2, "grep", "toolu_01GrepBackoff", {"pattern": "def .*backoff", "path": f"{ROOT}/harbor"},
           t("10:00:09.000"), t("10:00:09.060"), output="Found 1 match\nharbor/util/backoff.py:\n  Line 4: def backoff(",
           title="def .*backoff", tag="CGrep01")
    w.tool(CHILD, c2, "read", "toolu_01ReadBackoff", {"filePath": f"{ROOT}/harbor/util/backoff.py"},
           t("10:00:20.000"), t("10:00:20.050"), output="<file>\n00001| import time\n</file>",
           title="harbor/util/backoff.py", tag="CRead01")
    w.tool(CHILD, c2, "write", "toolu_01WriteSurvey", {
        "filePath": f"{ROOT}/docs/retry-survey.md",
        "content": "# Retry survey\n\n- harbor/util/backoff.py: exponential backoff, no jitter.\n"},
        t("10:00:35.000"), t("10:00:35.100"), metadata={"filepath": f"{ROOT}/docs/retry-survey.md", "exists": False},
        title="docs/retry-survey.md", tag="CWrite01")
    c3 = w.message(CHILD, "assistant", t("10:00:36.500"), t("10:00:39.900"), parent_msg=c1,
                   model="claude-haiku-4-5", agent="explore", tokens=tok(8, 74, 0, 9100, 0), cost=0.0014, tag="CAsst02")
    w.text(CHILD, c3, t("10:00:37.000"), "One helper: harbor/util/backoff.py. Notes in docs/retry-survey.md.", "CText01")

    # -- a child whose parent session is not in the store ------------------------------------------
    day = "2025-11-19"
    w.session(ORPHAN, "Check lint (@general subagent)", ms(day, "08:00:00.000"), ms(day, "08:00:09.000"), parent=GONE_PARENT)
    o1 = w.message(ORPHAN, "user", ms(day, "08:00:00.200"), agent="general", tag="OUser01")
    w.text(ORPHAN, o1, ms(day, "08:00:00.200"), "Run ruff on harbor/ and report the findings", "OUserText01")
    o2 = w.message(ORPHAN, "assistant", ms(day, "08:00:01.000"), ms(day, "08:00:09.000"), parent_msg=o1,
                   agent="general", tokens=tok(11, 95, 0, 0, 6020), cost=0.0242, tag="OAsst01")
    w.tool(ORPHAN, o2, "bash", "toolu_01BashRuff", {"command": "ruff check harbor", "description": "Lint"},
           ms(day, "08:00:02.000"), ms(day, "08:00:03.000"), output="harbor/sync.py:3:1: F401 unused import\n",
           metadata={"output": "harbor/sync.py:3:1: F401 unused import\n", "exit": 1, "description": "Lint"},
           title="ruff check harbor", tag="OBash01")


if __name__ == "__main__":
    main()
