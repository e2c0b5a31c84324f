"""Build ``webapp/.crush/crush.db``: a Crush store with the columns of real stores (goose
version 20250627000000) holding a main session whose ``agent`` call runs a child session
(id ``<message>$$<call>``, ``parent_session_id`` set). As Crush does, the parent's ``cost``
includes the child's (0.0224 of its own + the child's 0.0013), and the token columns hold the last
step's context, not totals. Run: ``python sample_logs/crush/_make_db.py``."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

DB = Path(__file__).parent / "webapp" / ".crush" / "crush.db"
T0 = 1754457380  # Unix seconds, as real stores hold them

SCHEMA = """
CREATE TABLE sessions (id TEXT PRIMARY KEY, parent_session_id TEXT, title TEXT NOT NULL,
  message_count INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0, cost REAL NOT NULL DEFAULT 0.0,
  updated_at INTEGER NOT NULL, created_at INTEGER NOT NULL, summary_message_id TEXT, todos TEXT);
CREATE TABLE messages (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL,
  parts TEXT NOT NULL DEFAULT '[]', model TEXT, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
  finished_at INTEGER, provider TEXT, is_summary_message INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE files (id TEXT PRIMARY KEY, session_id TEXT NOT NULL, path TEXT NOT NULL, content TEXT NOT NULL,
  version INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE read_files (session_id TEXT NOT NULL, path TEXT NOT NULL, read_at INTEGER NOT NULL,
  PRIMARY KEY (path, session_id));
"""


def part(kind: str, **data: object) -> dict:
    return {"type": kind, "data": data}


def call(cid: str, name: str, args: dict) -> dict:
    return part("tool_call", id=cid, name=name, input=json.dumps(args), type="function", finished=True)


def result(cid: str, name: str, content: str, error: bool = False) -> dict:
    return part("tool_result", tool_call_id=cid, name=name, content=content, metadata="", is_error=error)


MAIN = "3f0c6a2e-1b7d-4e58-9a41-0c2d5e8f7a10"
CHILD = "msg-a2$$call-agent"
MESSAGES = [
    (MAIN, "msg-u1", "user", [part("text", text="Add a health check endpoint to the server")], None, 0),
    (
        MAIN,
        "msg-a1",
        "assistant",
        [
            part("reasoning", thinking="Look at the server first."),
            call("call-view", "view", {"file_path": "server/main.go"}),
            part("finish", reason="tool_use", time=T0 + 3),
        ],
        "claude-sonnet-4-20250514",
        2,
    ),
    (MAIN, "msg-t1", "tool", [result("call-view", "view", "package main\n")], None, 3),
    (
        MAIN,
        "msg-a2",
        "assistant",
        [
            call("call-agent", "agent", {"prompt": "Find where routes are registered"}),
        ],
        "claude-sonnet-4-20250514",
        5,
    ),
    (CHILD, "msg-c1", "user", [part("text", text="Find where routes are registered")], None, 6),
    (
        CHILD,
        "msg-c2",
        "assistant",
        [call("call-grep", "grep", {"pattern": "HandleFunc", "path": "server"})],
        "claude-3-5-haiku-20241022",
        7,
    ),
    (CHILD, "msg-c3", "tool", [result("call-grep", "grep", "server/routes.go:12")], None, 8),
    (
        CHILD,
        "msg-c4",
        "assistant",
        [part("text", text="Routes are in server/routes.go")],
        "claude-3-5-haiku-20241022",
        9,
    ),
    (MAIN, "msg-t2", "tool", [result("call-agent", "agent", "Routes are in server/routes.go")], None, 10),
    (
        MAIN,
        "msg-a3",
        "assistant",
        [
            call("call-edit", "edit", {"file_path": "server/routes.go", "old_string": "a", "new_string": "b"}),
            call("call-bash", "bash", {"command": "go test ./..."}),
        ],
        "claude-sonnet-4-20250514",
        12,
    ),
    (
        MAIN,
        "msg-t3",
        "tool",
        [
            result("call-edit", "edit", "edited"),
            result("call-bash", "bash", "FAIL", error=True),
        ],
        None,
        15,
    ),
    (
        MAIN,
        "msg-a4",
        "assistant",
        [part("text", text="Added /healthz."), part("finish", reason="end_turn")],
        "claude-sonnet-4-20250514",
        18,
    ),
]


def main() -> None:
    DB.parent.mkdir(parents=True, exist_ok=True)
    DB.unlink(missing_ok=True)
    con = sqlite3.connect(DB)
    con.executescript(SCHEMA)
    con.execute(
        "INSERT INTO sessions VALUES (?, NULL, 'Health check', 8, 4210, 655, 0.0237, ?, ?, NULL, NULL)",
        [MAIN, T0 + 18, T0],
    )
    con.execute(
        "INSERT INTO sessions VALUES (?, ?, 'Find routes', 4, 1200, 80, 0.0013, ?, ?, NULL, NULL)",
        [CHILD, MAIN, T0 + 9, T0 + 6],
    )
    for sid, mid, role, parts, model, dt in MESSAGES:
        con.execute(
            "INSERT INTO messages (id, session_id, role, parts, model, created_at, updated_at, finished_at, provider)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [mid, sid, role, json.dumps(parts), model, T0 + dt, T0 + dt, T0 + dt, "anthropic" if model else None],
        )
    con.commit()
    con.close()


if __name__ == "__main__":
    main()
