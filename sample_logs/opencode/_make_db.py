"""Builds ``opencode.db``: an opencode >= 1.2 SQLite store with the same kind of data as the JSON
storage tree (see README.md). Standard library only, deterministic: the same rows every run.

Tables follow the v1.2 layout (section 5 of shared/specs/harness-log-formats.md and the public
write-ups it cites): ``project``, ``session`` (``parent_id``, ``agent``), ``message`` and ``part``
with each object in a ``data`` JSON column (without the id columns), times in Unix milliseconds,
plus a ``todo`` table the adapter does not read.

Usage: ``python _make_db.py [OUT]`` (default: opencode.db beside this script).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from datetime import datetime
from pathlib import Path

ROOT = "/home/dev/projects/kelp"
PROJECT = "a3f09d1c6b2e4f8a0c7d5e3b1a9f8e7d6c5b4a39"
VERSION = "1.2.6"
MAIN = "ses_5b20a1c47ffeKp1Xq8RmT3vNw2"
CHILD = "ses_5b20a1d93ffeKp2Yr9SnU4wOx3"
LATER = "ses_5b20b0f11ffeKp3Zs0ToV5xPy4"
NOTES_PROMPT = "Write docs/MIGRATION.md: what moved where when kelp/parser.py became the kelp/parser package"

SCHEMA = """
CREATE TABLE project (
  id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT, icon_url TEXT,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_initialized INTEGER
);
CREATE TABLE session (
  id TEXT PRIMARY KEY, project_id TEXT NOT NULL, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL,
  title TEXT NOT NULL, version TEXT NOT NULL, share_url TEXT, agent TEXT,
  time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, time_compacting INTEGER, time_archived INTEGER
);
CREATE TABLE message (
  id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
  data TEXT NOT NULL
);
CREATE TABLE part (
  id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER NOT NULL,
  time_updated INTEGER NOT NULL, data TEXT NOT NULL
);
CREATE TABLE todo (
  session_id TEXT NOT NULL, content TEXT NOT NULL, status TEXT NOT NULL, priority TEXT NOT NULL,
  position INTEGER NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL
);
CREATE INDEX message_session_idx ON message (session_id);
CREATE INDEX part_message_idx ON part (message_id);
"""


def t(hms: str) -> int:
    return int(datetime.fromisoformat(f"2026-02-12T{hms}+00:00").timestamp() * 1000)


def tok(inp: int, out: int, reasoning: int, read: int, write: int) -> dict:
    return {"total": inp + out + reasoning + read + write, "input": inp, "output": out, "reasoning": reasoning,
            "cache": {"read": read, "write": write}}


class Db:
    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self.n = 0

    def ident(self, prefix: str, stamp: int, tag: str) -> str:
        self.n += 1
        return f"{prefix}_{stamp:011x}{self.n % 16:x}{tag:0<14}"[: len(prefix) + 27]

    def session(self, sid, slug, title, created, updated, parent=None, agent=None):
        self.con.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, agent, time_created,"
            " time_updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (sid, PROJECT, parent, slug, ROOT, title, VERSION, agent, created, updated))

    def message(self, sid, role, created, completed=None, *, parent_msg=None, model="gpt-5", agent="build",
                tokens=None, cost=0.0, tag):
        mid = self.ident("msg", created, tag)
        if role == "user":
            data = {"role": "user", "time": {"created": created}, "agent": agent,
                    "model": {"providerID": "openai", "modelID": model}}
        else:
            data = {"role": "assistant", "time": {"created": created, "completed": completed}, "parentID": parent_msg,
                    "modelID": model, "providerID": "openai", "mode": agent, "agent": agent,
                    "path": {"cwd": ROOT, "root": ROOT}, "cost": cost, "tokens": tokens, "finish": "stop"}
        self.con.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                         (mid, sid, created, completed or created, json.dumps(data, separators=(",", ":"))))
        return mid

    def part(self, sid, mid, stamp, data, tag, end=None):
        pid = self.ident("prt", stamp, tag)
        self.con.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                         (pid, mid, sid, stamp, end or stamp, json.dumps(data, separators=(",", ":"))))

    def text(self, sid, mid, stamp, text, tag):
        self.part(sid, mid, stamp, {"type": "text", "text": text, "time": {"start": stamp, "end": stamp}}, tag)

    def tool(self, sid, mid, tool, call_id, inp, start, end, *, output="", metadata=None, status="completed",
             title="", tag):
        state = {"status": status, "input": inp, "output": output, "title": title, "metadata": metadata or {},
                 "time": {"start": start, "end": end}}
        self.part(sid, mid, start, {"type": "tool", "callID": call_id, "tool": tool, "state": state}, tag, end)


def build(out: Path) -> None:
    if out.exists():
        out.unlink()
    con = sqlite3.connect(out)
    con.executescript(SCHEMA)
    db = Db(con)
    con.execute("INSERT INTO project VALUES (?, ?, 'git', 'kelp', NULL, ?, ?, ?)",
                (PROJECT, ROOT, t("14:58:00.000"), t("16:35:00.000"), t("14:58:01.000")))

    # The main session: reads the module, spawns a general subagent for the notes, splits the module.
    db.session(MAIN, "brisk-kelp-forest", "Split the parser module", t("15:00:00.000"), t("15:04:30.000"))
    u = db.message(MAIN, "user", t("15:00:00.400"), tag="MUser01")
    db.text(MAIN, u, t("15:00:00.400"),
            "Split kelp/parser.py into a package; a subagent should write the migration notes.", "MUserText01")
    a1 = db.message(MAIN, "assistant", t("15:00:01.000"), t("15:01:40.000"), parent_msg=u,
                    tokens=tok(2100, 640, 384, 6144, 0), cost=0.0153, tag="MAsst01")
    db.part(MAIN, a1, t("15:00:01.100"), {"type": "step-start"}, "MStep01")
    db.part(MAIN, a1, t("15:00:01.500"), {"type": "reasoning", "text": "Look at the module first.",
                                           "time": {"start": t("15:00:01.500"), "end": t("15:00:02.000")}}, "MReason01")
    db.tool(MAIN, a1, "read", "call_Kp1ReadParser", {"filePath": f"{ROOT}/kelp/parser.py"},
            t("15:00:03.000"), t("15:00:03.040"), output="<file>\n00001| import re\n</file>", title="kelp/parser.py",
            tag="MRead01")
    db.tool(MAIN, a1, "task", "call_Kp1TaskNotes", {
        "description": "Write migration notes", "prompt": NOTES_PROMPT, "subagent_type": "general"},
        t("15:00:10.000"), t("15:01:35.000"),
        output=f"task_id: {CHILD} (for resuming to continue this task if needed)\n\n<task_result>\nWrote docs/MIGRATION.md\n</task_result>",
        metadata={"parentSessionId": MAIN, "sessionId": CHILD, "model": {"providerID": "openai", "modelID": "gpt-5-mini"}},
        title="Write migration notes", tag="MTask01")
    a2 = db.message(MAIN, "assistant", t("15:01:41.000"), t("15:03:50.000"), parent_msg=u,
                    tokens=tok(1320, 1910, 512, 8704, 0), cost=0.0289, tag="MAsst02")
    db.tool(MAIN, a2, "write", "call_Kp1WriteInit", {
        "filePath": f"{ROOT}/kelp/parser/__init__.py", "content": "from .lexer import lex\nfrom .grammar import parse\n"},
        t("15:01:50.000"), t("15:01:50.100"), metadata={"exists": False}, title="kelp/parser/__init__.py", tag="MWrite01")
    db.tool(MAIN, a2, "edit", "call_Kp1EditCli", {
        "filePath": "kelp/cli.py", "oldString": "from kelp.parser import parse",
        "newString": "from kelp.parser import parse  # package now"},
        t("15:02:10.000"), t("15:02:10.200"), title="kelp/cli.py", tag="MEdit01")
    db.tool(MAIN, a2, "bash", "call_Kp1BashPytest", {"command": "python -m pytest -q", "description": "Run tests"},
            t("15:02:30.000"), t("15:02:41.000"), output="1 failed, 30 passed in 1.92s\n",
            metadata={"output": "1 failed, 30 passed in 1.92s\n", "exit": 1, "description": "Run tests"},
            title="python -m pytest -q", tag="MBash01")
    db.tool(MAIN, a2, "bash", "call_Kp1BashStatus", {"command": "git status --short", "description": "Show changes",
                                                    "workdir": "kelp"},
            t("15:03:00.000"), t("15:03:00.300"), output=" M cli.py\n?? parser/\n",
            metadata={"output": " M cli.py\n?? parser/\n", "exit": 0, "description": "Show changes"},
            title="git status --short", tag="MBash02")
    a3 = db.message(MAIN, "assistant", t("15:03:51.000"), t("15:04:30.000"), parent_msg=u,
                    tokens=tok(410, 220, 0, 10752, 0), cost=0.0044, tag="MAsst03")
    db.tool(MAIN, a3, "read", "call_Kp1ReadNotes", {"filePath": f"{ROOT}/docs/MIGRATION.md"},
            t("15:03:55.000"), t("15:03:55.030"), output="<file>\n00001| # Migration\n</file>",
            title="docs/MIGRATION.md", tag="MRead02")
    db.text(MAIN, a3, t("15:04:20.000"), "Split done; one test still imports kelp.parser.tokens.", "MText01")

    # The subagent the task call created (parent_id, agent "general").
    db.session(CHILD, "calm-kelp-notes", "Write migration notes (@general subagent)", t("15:00:10.300"),
               t("15:01:34.000"), parent=MAIN, agent="general")
    cu = db.message(CHILD, "user", t("15:00:10.400"), agent="general", model="gpt-5-mini", tag="CUser01")
    db.text(CHILD, cu, t("15:00:10.400"), NOTES_PROMPT, "CUserText01")
    ca = db.message(CHILD, "assistant", t("15:00:11.000"), t("15:01:34.000"), parent_msg=cu, model="gpt-5-mini",
                    agent="general", tokens=tok(3050, 880, 256, 0, 0), cost=0.0024, tag="CAsst01")
    db.tool(CHILD, ca, "read", "call_Kp2ReadParser", {"filePath": f"{ROOT}/kelp/parser.py"},
            t("15:00:15.000"), t("15:00:15.050"), output="<file>\n00001| import re\n</file>", title="kelp/parser.py",
            tag="CRead01")
    db.tool(CHILD, ca, "write", "call_Kp2WriteNotes", {
        "filePath": f"{ROOT}/docs/MIGRATION.md", "content": "# Migration\n\n- kelp.parser.lex -> kelp.parser.lexer.lex\n"},
        t("15:01:20.000"), t("15:01:20.080"), metadata={"exists": False}, title="docs/MIGRATION.md", tag="CWrite01")

    # A later, separate session that builds on the new package (a cross-run artifact).
    db.session(LATER, "quiet-kelp-readme", "Update the README", t("16:30:00.000"), t("16:31:10.000"))
    lu = db.message(LATER, "user", t("16:30:00.300"), tag="LUser01")
    db.text(LATER, lu, t("16:30:00.300"), "Update the README for the new parser package", "LUserText01")
    la = db.message(LATER, "assistant", t("16:30:01.000"), t("16:31:10.000"), parent_msg=lu,
                    tokens=tok(1800, 420, 128, 4096, 0), cost=0.0071, tag="LAsst01")
    db.tool(LATER, la, "read", "call_Kp3ReadInit", {"filePath": f"{ROOT}/kelp/parser/__init__.py"},
            t("16:30:05.000"), t("16:30:05.020"), output="<file>\n00001| from .lexer import lex\n</file>",
            title="kelp/parser/__init__.py", tag="LRead01")
    db.tool(LATER, la, "edit", "call_Kp3EditReadme", {
        "filePath": f"{ROOT}/README.md", "oldString": "kelp/parser.py", "newString": "kelp/parser/"},
        t("16:30:40.000"), t("16:30:40.150"), title="README.md", tag="LEdit01")

    con.execute("INSERT INTO todo VALUES (?, 'Split parser', 'completed', 'high', 0, ?, ?)",
                (MAIN, t("15:00:02.000"), t("15:04:00.000")))
    con.commit()
    con.close()


if __name__ == "__main__":
    build(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "opencode.db")
