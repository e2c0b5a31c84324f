"""Commits and PRs a session's log shows it made (ingest/commits.py, the commits table and views)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from sessiongraph.ingest import commits
from sessiongraph.ingest.claude_code import parse
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

SID = "7d1e2f30-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
MESSAGE = "Fix flicker below five percent"  # log text: never stored
PR = "https://github.com/dev/lamp/pull/42"


def _shell(call_id: str, command: str, output: str, t: str) -> list[dict]:
    base = {"sessionId": SID, "cwd": "/home/dev/lamp", "gitBranch": "fix/flicker", "version": "2.1.39"}
    use = {
        **base,
        "type": "assistant",
        "uuid": f"a-{call_id}",
        "timestamp": f"2026-01-05T10:00:{t}.000Z",
        "message": {
            "id": f"msg_{call_id}",
            "role": "assistant",
            "model": "claude-opus-4-5-20251101",
            "content": [{"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": command}}],
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    }
    result = {
        **base,
        "type": "user",
        "uuid": f"u-{call_id}",
        "timestamp": f"2026-01-05T10:00:{t}.500Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}]},
        "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False},
    }
    return [use, result]


def _transcript(tmp_path) -> str:
    lines = [
        {
            "type": "user",
            "sessionId": SID,
            "cwd": "/home/dev/lamp",
            "gitBranch": "fix/flicker",
            "uuid": "u0",
            "timestamp": "2026-01-05T10:00:00.000Z",
            "message": {"role": "user", "content": "fix the flicker and open a PR"},
        },
        *_shell(
            "toolu_1",
            f"git add -A && git commit -m '{MESSAGE}'",
            f"[fix/flicker 3f2a9c1] {MESSAGE}\n 1 file changed",
            "10",
        ),
        *_shell("toolu_2", "git log -1", f"commit 3f2a9c1\n[other 1234567] {MESSAGE}", "15"),
        *_shell(
            "toolu_3",
            "git push -u origin fix/flicker",
            "To github.com:dev/lamp.git\n * [new branch]      fix/flicker -> fix/flicker\n",
            "20",
        ),
        *_shell("toolu_4", f"gh pr create --title '{MESSAGE}' --body x", f"{PR}\n", "30"),
        {
            "type": "pr-link",
            "sessionId": SID,
            "prNumber": 42,
            "prUrl": PR,
            "prRepository": "dev/lamp",
            "timestamp": "2026-01-05T10:00:31.000Z",
        },
    ]
    path = tmp_path / "projects" / "-home-dev-lamp" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def test_shell_outputs():
    call = {"call_id": "c", "command": "git commit -m x", "line": 3}
    rows = commits.from_shell(call, ["[main (root-commit) abc1234] first\n"])
    assert [(r["kind"], r["branch"], r["commit_hash"], r["evidence"]) for r in rows] == [
        ("commit", "main", "abc1234", "git_commit_output")
    ]
    # the same output from a command that made no commit says nothing
    assert commits.from_shell({**call, "command": "cat log.txt"}, ["[main abc1234] first\n"]) == []
    pr = commits.from_shell({**call, "command": "gh pr create -f"}, [PR])
    assert [(r["kind"], r["repo"], r["pr_number"], r["pr_url"]) for r in pr] == [("pr", "dev/lamp", 42, PR)]
    assert commits.from_shell({**call, "command": None}, ["[main abc1234] first"]) == []


# Texts near what the patterns take: pieces of them, and strings each pattern matches, joined.
_PIECES = st.sampled_from(
    ["git", "gh", "commit", "push", "pr", "create", " ", "\n", "\t", ";", "[", "]", "[new branch]", " -> ", "x"]
)
_MATCHES = st.sampled_from(
    [
        commits._COMMIT,
        commits._PR_URL,
        commits._NEW_BRANCH,
        commits._GIT_COMMIT,
        commits._GH_PR_CREATE,
        commits._GIT_PUSH,
    ]
).flatmap(st.from_regex)
_TEXTS = st.lists(st.one_of(_PIECES, _MATCHES), max_size=4).map("".join)


def _plain_facts(texts: list[str]) -> list[tuple]:
    """output_facts without its literal tests: every pattern over every output."""
    output = "\n".join(texts)
    if not output:
        return []
    most = commits.MAX_ROWS
    facts: list[tuple] = [("commit", m["branch"], m["hash"]) for m in commits._COMMIT.finditer(output)][:most]
    facts += [("pr", m["repo"], m[0], commits._number(m["number"])) for m in commits._PR_URL.finditer(output)][:most]
    return facts + [("push", m["branch"]) for m in commits._NEW_BRANCH.finditer(output)][:most]


@settings(max_examples=100, deadline=None)
@given(st.lists(_TEXTS, min_size=1, max_size=3), _TEXTS)
def test_literal_tests_change_nothing(texts, command):
    """made_by and output_facts test for the words their patterns need before running them: the
    same answers as the patterns alone."""
    assert commits.output_facts(texts) == _plain_facts(texts)
    patterns = (commits._GIT_COMMIT, commits._GH_PR_CREATE, commits._GIT_PUSH)
    assert commits.made_by(command) == any(p.search(command) for p in patterns)


def test_claude_rows(tmp_path):
    frames = parse(_transcript(tmp_path))
    got = frames.commits.sort("line").select(
        "kind", "evidence", "tier", "branch", "commit_hash", "pr_number", "call_id"
    )
    assert got.rows() == [
        ("commit", "git_commit_output", "verified", "fix/flicker", "3f2a9c1", None, "toolu_1"),
        ("push", "git_push_output", "verified", "fix/flicker", None, None, "toolu_3"),
        ("pr", "gh_pr_create_output", "verified", None, None, 42, "toolu_4"),
        ("pr", "pr_link", "verified", None, None, 42, None),
    ]
    assert set(frames.commits["session_id"]) == {f"claude-code:{SID}"}


def test_store_views_and_privacy(tmp_path):
    path = _transcript(tmp_path)
    db = str(tmp_path / "s.duckdb")
    ingest([path], db=db, workers=1)
    with Store(db, read_only=True) as store:
        rows = store.query(
            "SELECT kind, tier, run_id, session_usd = run_usd AS same, branch FROM commit_costs ORDER BY line"
        )
        assert rows["kind"].to_list() == ["commit", "push", "pr", "pr"]
        assert set(rows["tier"]) == {"verified"}  # no heuristic row without --git
        assert rows["run_id"].null_count() == 0 and rows["same"].all()
        assert store.query("SELECT pr_url, runs FROM pr_costs").rows() == [(PR, 1)]
        assert store.query("SELECT branch, commits FROM branch_costs").rows() == [("fix/flicker", 1)]
        dump = store.query("SELECT * FROM commits").write_csv()
        assert MESSAGE not in dump


def _codex_rollout(tmp_path) -> str:
    tid = "019b8e00-0000-7000-8000-000000000031"
    t = "2026-01-05T10:00:{:02d}.000Z"

    def rec(s: int, kind: str, payload: dict) -> dict:
        return {"timestamp": t.format(s), "type": kind, "payload": payload}

    def exec_call(s: int, call_id: str, cmd: str) -> dict:
        args = json.dumps({"cmd": cmd, "workdir": "/home/dev/lamp"})
        return rec(
            s, "response_item", {"type": "function_call", "name": "exec_command", "arguments": args, "call_id": call_id}
        )

    def output(s: int, call_id: str, text: str) -> dict:
        return rec(s, "response_item", {"type": "function_call_output", "call_id": call_id, "output": text})

    lines = [
        rec(0, "session_meta", {"id": tid, "timestamp": t.format(0), "cwd": "/home/dev/lamp", "source": "cli"}),
        exec_call(1, "c1", f"git commit -am '{MESSAGE}'"),
        output(2, "c1", f"Process exited with code 0\nOutput:\n[fix/flicker 3f2a9c1] {MESSAGE}\n"),
        rec(
            2,
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": "c1",
                "exit_code": 0,
                "aggregated_output": f"[fix/flicker 3f2a9c1] {MESSAGE}\n",
                "stdout": "",
                "stderr": "",
            },
        ),
        exec_call(3, "c2", "cat notes.txt"),  # the same line from a command that commits nothing
        output(4, "c2", f"Process exited with code 0\nOutput:\n[fix/flicker 3f2a9c1] {MESSAGE}\n"),
        # a push still running when its call returns; the write_stdin poll prints the new branch
        exec_call(5, "c3", "git push -u origin fix/flicker"),
        output(6, "c3", "Process running with session ID 7001\nOutput:\n"),
        rec(
            7,
            "response_item",
            {
                "type": "function_call",
                "name": "write_stdin",
                "arguments": json.dumps({"session_id": 7001, "chars": ""}),
                "call_id": "c4",
            },
        ),
        output(8, "c4", "Process exited with code 0\nOutput:\n * [new branch]      fix/flicker -> fix/flicker\n"),
    ]
    path = tmp_path / "sessions" / f"rollout-2026-01-05T10-00-00-{tid}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return str(path)


def test_codex_rows(tmp_path):
    from sessiongraph.ingest import codex

    frames = codex.parse(_codex_rollout(tmp_path))
    got = frames.commits.sort("line").select("call_id", "kind", "evidence", "tier", "branch", "commit_hash", "line")
    # one row for c1 though its output and its exec_command_end both print the commit; the
    # poll's output is its exec call's
    assert got.rows() == [
        ("c1", "commit", "git_commit_output", "verified", "fix/flicker", "3f2a9c1", 2),
        ("c3", "push", "git_push_output", "verified", "fix/flicker", None, 7),
    ]
    assert set(frames.commits["session_id"]) == {"codex:019b8e00-0000-7000-8000-000000000031"}
    assert str(frames.commits["ts"][1]) == "2026-01-05 10:00:08+00:00"  # when the poll saw it end


SCENARIO = Path(__file__).resolve().parent.parent / "sample_logs" / "scenarios" / "commits"
SAMPLE_MESSAGE = "Add a dim level to the beacon"


def test_samples(tmp_path):
    db = str(tmp_path / "s.duckdb")
    ingest([str(SCENARIO)], db=db, workers=1)
    with Store(db, read_only=True) as store:
        rows = store.query(
            "SELECT session_id, run_id, kind, tier, evidence, repo, branch, commit_hash, pr_number, "
            "round(run_usd, 6) FROM commit_costs ORDER BY session_id, line"
        )
        cc, cc_run = "claude-code:5e8a1c24-7b39-4d0f-a6e2-91c3d7f40b85", "run_05d57459e617bc4a"
        cx, cx_run = "codex:019b9820-3c40-7a11-8d5e-2f6b9a0c4e71", "run_a693128f71d49205"
        # one run each; the Codex commit's repo is session_meta's URL, the Claude PR's its own
        assert rows.rows() == [
            (cc, cc_run, "commit", "verified", "git_commit_output", None, "feat/x", "1a2b3c4", None, 0.139181),
            (cc, cc_run, "pr", "verified", "gh_pr_create_output", "example/beacon", "feat/x", None, 17, 0.139181),
            (cc, cc_run, "pr", "verified", "pr_link", "example/beacon", "feat/x", None, 17, 0.139181),
            (
                cx,
                cx_run,
                "commit",
                "verified",
                "git_commit_output",
                "https://github.com/example/ferry.git",
                "main",
                "9c8b7a6",
                None,
                0.094232,
            ),
        ]
        assert store.query("SELECT pr_url, runs FROM pr_costs").rows() == [
            ("https://github.com/example/beacon/pull/17", 1)
        ]
        assert SAMPLE_MESSAGE not in store.query("SELECT * FROM commits").write_csv()


def test_run_trajectories_carry_the_task_repo_and_base_commit(tmp_path):
    """`export trajectories --by run`: the run's task repo and base_commit, as OCP run.task has them."""
    from sessiongraph.dataset.trajectories import export_trajectories

    db = str(tmp_path / "s.duckdb")
    ingest([str(SCENARIO)], db=db, workers=1, privacy="full")
    export_trajectories(tmp_path / "out", db=db, by="run", split="train=1")
    rows = pl.read_parquet(tmp_path / "out" / "train.parquet").sort("root_session_id")
    tasks = [(r["root_session_id"], r["task"]["repo"], r["task"]["base_commit"]) for r in rows.to_dicts()]
    assert tasks == [
        ("claude-code:5e8a1c24-7b39-4d0f-a6e2-91c3d7f40b85", "example/beacon", None),  # its pr-link's repository
        (
            "codex:019b9820-3c40-7a11-8d5e-2f6b9a0c4e71",
            "https://github.com/example/ferry.git",
            "e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4",
        ),
    ]


def test_a_pr_number_past_bigint_is_none():
    """A record or URL whose PR number no BIGINT holds: the row keeps its URL, not the number."""
    url = "https://github.com/dev/lamp/pull/42"
    assert commits.from_pr_link({"prUrl": url, "prNumber": 2**64 - 1}, None, 1)[0]["pr_number"] == 42
    huge = "https://github.com/dev/lamp/pull/18446744073709551615"
    assert commits.from_pr_link({"prUrl": huge, "prNumber": 2**64 - 1}, None, 1)[0]["pr_number"] is None
    rows = commits.from_shell({"call_id": "c", "command": "gh pr create -f", "line": 1}, [huge])
    assert [(r["pr_url"], r["pr_number"]) for r in rows] == [(huge, None)]
