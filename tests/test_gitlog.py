"""`ingest --git` (sessiongraph/gitlog.py): heuristic commits rows and in_branch from real repositories
made with the git binary, and Claude Code transcripts whose cwd is that repository."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from sessiongraph import gitlog
from sessiongraph.dataset import run_trajectories
from sessiongraph.dataset.messages import commit_labels
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from sessiongraph.views import report

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git binary to build repositories")

DAY = "2026-01-05"
MESSAGE = "Tune the lamp below five percent"  # a commit message: never stored
AUTHOR = "Grace Commitwright"  # and an author
EMAIL = "grace@lamp.example"
TOKEN = "ghp_leakyTokenInRemoteUrl123"  # a credential in the remote URL
COLUMNS = ["session_id", "kind", "tier", "evidence", "repo", "branch", "commit_hash", "in_branch"]


def git(repo: Path, *args: str, at: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": AUTHOR,
        "GIT_AUTHOR_EMAIL": EMAIL,
        "GIT_COMMITTER_NAME": AUTHOR,
        "GIT_COMMITTER_EMAIL": EMAIL,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    if at:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"{DAY}T{at}+0000"
    out = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def commit(repo: Path, at: str, files: dict[str, str | None], message: str = MESSAGE) -> str:
    """Write (or, with None, delete) ``files`` and commit them at ``at`` (HH:MM:SS): the full hash."""
    for name, body in files.items():
        path = repo / name
        if body is None:
            git(repo, "rm", "-q", name)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        git(repo, "add", name)
    git(repo, "commit", "-q", "-m", message, at=at)
    return git(repo, "rev-parse", "HEAD")


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "remote", "add", "origin", f"https://x-access-token:{TOKEN}@github.com/dev/lamp.git")
    (path / ".gitignore").write_text("scratch/\n")
    commit(path, "08:00:00", {"README.md": "lamp\n", ".gitignore": "scratch/\n"})
    return path


def transcript(
    logs: Path, sid: str, cwd: Path, start: str, end: str, writes: list[tuple[str, str]], branch: str = "main", extra=()
) -> Path:
    """A Claude Code session in ``cwd`` from ``start`` to ``end`` (HH:MM:SS) that writes ``writes``
    ((time, path relative to cwd)) with the Write tool; ``extra`` more records."""
    base = {"sessionId": sid, "cwd": str(cwd), "gitBranch": branch, "version": "2.1.39"}

    def at(t: str) -> str:
        return f"{DAY}T{t}.000Z"

    lines: list[dict] = [
        {
            **base,
            "type": "user",
            "uuid": f"{sid}-u0",
            "timestamp": at(start),
            "message": {"role": "user", "content": "go"},
        }
    ]
    for i, (t, rel) in enumerate(writes):
        call = f"toolu_{sid[:4]}_{i}"
        lines += [
            {
                **base,
                "type": "assistant",
                "uuid": f"{sid}-a{i}",
                "timestamp": at(t),
                "message": {
                    "id": f"msg_{sid[:4]}_{i}",
                    "role": "assistant",
                    "model": "claude-opus-4-5-20251101",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": call,
                            "name": "Write",
                            "input": {"file_path": str(cwd / rel), "content": "x"},
                        }
                    ],
                    "usage": {"input_tokens": 1000, "output_tokens": 200},
                },
            },
            {
                **base,
                "type": "user",
                "uuid": f"{sid}-r{i}",
                "timestamp": at(t),
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]},
            },
        ]
    lines += list(extra)
    lines.append(
        {
            **base,
            "type": "assistant",
            "uuid": f"{sid}-end",
            "timestamp": at(end),
            "message": {
                "id": f"msg_{sid[:4]}_end",
                "role": "assistant",
                "model": "claude-opus-4-5-20251101",
                "content": [{"type": "text", "text": "done"}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        }
    )
    path = logs / "projects" / "-lamp" / f"{sid}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def shell_commit(sid: str, cwd: Path, t: str, branch: str, short: str) -> list[dict]:
    """A Bash `git commit` and its output naming ``short``: a verified commits row."""
    base = {"sessionId": sid, "cwd": str(cwd), "gitBranch": branch, "version": "2.1.39"}
    call = f"toolu_{sid[:4]}_commit"
    return [
        {
            **base,
            "type": "assistant",
            "uuid": f"{sid}-c",
            "timestamp": f"{DAY}T{t}.000Z",
            "message": {
                "id": f"msg_{sid[:4]}_c",
                "role": "assistant",
                "model": "claude-opus-4-5-20251101",
                "content": [{"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "git commit -am x"}}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {
            **base,
            "type": "user",
            "uuid": f"{sid}-cr",
            "timestamp": f"{DAY}T{t}.500Z",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "ok"}]},
            "toolUseResult": {"stdout": f"[{branch} {short}] {MESSAGE}\n 1 file changed", "stderr": ""},
        },
    ]


S = {n: f"{n}0000000-0000-4000-8000-00000000000{n}" for n in "123456"}


@pytest.fixture
def world(tmp_path):
    """One repository, six sessions: what each commit holds decides its rows (see the asserts)."""
    repo = new_repo(tmp_path / "lamp")
    logs = tmp_path / "logs"
    h = {}
    # 1: writes a.py and b.py, a person commits exactly those 5 minutes after the session ends
    transcript(logs, S["1"], repo, "10:00:00", "10:10:00", [("10:01:00", "src/a.py"), ("10:02:00", "src/b.py")])
    h["equal"] = commit(repo, "10:15:00", {"src/a.py": "a", "src/b.py": "b"})
    # 2: writes c.py (and a scratch file it removes, and an ignored one); the commit holds c.py and a lockfile
    transcript(
        logs,
        S["2"],
        repo,
        "10:20:00",
        "10:30:00",
        [("10:21:00", "src/c.py"), ("10:22:00", "tmp_notes.txt"), ("10:23:00", "scratch/log.txt")],
    )
    h["contain"] = commit(repo, "10:35:00", {"src/c.py": "c", "package-lock.json": "{}"})
    # 3: writes d.py; the commit holds e.py only: nobody's
    transcript(logs, S["3"], repo, "10:40:00", "10:45:00", [("10:41:00", "src/d.py")])
    h["other"] = commit(repo, "10:50:00", {"src/e.py": "e"})
    # 4: writes f.py; the commit comes two hours after the session: past the window
    transcript(logs, S["4"], repo, "11:00:00", "11:05:00", [("11:01:00", "src/f.py")])
    h["late"] = commit(repo, "13:05:00", {"src/f.py": "f", "src/d.py": "d"})
    # 5: writes g.py and its own log shows the commit (verified): no heuristic row for it
    h["verified"] = commit(repo, "13:30:00", {"src/g.py": "g"})
    transcript(
        logs,
        S["5"],
        repo,
        "13:20:00",
        "13:31:00",
        [("13:21:00", "src/g.py")],
        extra=shell_commit(S["5"], repo, "13:30:00", "main", h["verified"][:7]),
    )
    # 6: on feat/x, writes h.py; the commit matches, then the branch is reset: no longer in it
    git(repo, "checkout", "-q", "-b", "feat/x")
    transcript(logs, S["6"], repo, "14:00:00", "14:05:00", [("14:01:00", "src/h.py")], branch="feat/x")
    h["reset"] = commit(repo, "14:10:00", {"src/h.py": "h"})
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    git(repo, "checkout", "-q", "main")
    return repo, logs, h


def commits_rows(db: str) -> pl.DataFrame:
    with Store(db, read_only=True) as store:
        return store.query(f"SELECT {', '.join(COMMITS_COLUMNS)} FROM commits ORDER BY ts, session_id, tier")


COMMITS_COLUMNS = [*COLUMNS, "ts", "source_path", "line", "call_id"]


def test_heuristic_rows_tiers_evidence_and_in_branch(world, tmp_path):
    repo, logs, h = world
    db = str(tmp_path / "s.duckdb")
    summary = ingest([str(logs)], db=db, workers=1, git=True)
    got = commits_rows(db).select(COLUMNS).rows()
    sid = {n: f"claude-code:{v}" for n, v in S.items()}
    assert got == [
        (sid["1"], "commit", "heuristic", "files_equal", "dev/lamp", "main", h["equal"], True),
        (sid["2"], "commit", "heuristic", "files_contain", "dev/lamp", "main", h["contain"], True),
        (sid["5"], "commit", "verified", "git_commit_output", None, "main", h["verified"][:7], True),
        (sid["6"], "commit", "heuristic", "files_equal", "dev/lamp", "feat/x", h["reset"], False),
    ]
    assert summary.git["repositories"] == 1 and summary.git["sessions"] == 6
    assert summary.git["heuristic"] == {"files_contain": 1, "files_equal": 2}
    assert summary.git["in_branch"] == {"true": 3, "false": 1}
    assert summary.git["problems"] == {}
    with Store(db, read_only=True) as store:
        # a heuristic row's time is its commit's, its log the session's
        rows = store.query("SELECT ts, source_path, call_id, line FROM commits WHERE session_id = ?", [sid["1"]])
        assert rows["ts"][0] == datetime(2026, 1, 5, 10, 15, tzinfo=UTC)  # whatever the local time zone
        assert rows["source_path"][0].endswith(f"{S['1']}.jsonl") and rows["call_id"][0] is None
        # dollars: each row carries its session's and its run's, as the views sum them
        costs = store.query(
            "SELECT c.commit_hash, c.session_usd, s.usd, c.run_usd, r.usd AS run"
            " FROM commit_costs c JOIN session_costs s USING (session_id) JOIN run_costs r ON r.run_id = c.run_id"
            " ORDER BY c.ts"
        )
        assert costs.height == 4 and costs["session_usd"].min() > 0
        assert costs["session_usd"].to_list() == costs["usd"].to_list()
        assert costs["run_usd"].to_list() == costs["run"].to_list()
        assert store.query("SELECT branch, commits FROM branch_costs ORDER BY branch").rows() == [
            ("feat/x", 1),
            ("main", 3),
        ]
        labels = {r["session_id"]: r for r in commit_labels(store, "session_id").iter_rows(named=True)}
        # --by run: the run's commits_in_branch, as the run's row takes it (run_trajectories.context)
        runs = dict(store.query("SELECT session_id, run_id FROM run_sessions").rows())
        by_run = run_trajectories.context(store)[3]
    assert by_run[runs[sid["1"]]]["commits_in_branch"] is True
    assert by_run[runs[sid["6"]]]["commits_in_branch"] is False
    assert labels[sid["1"]]["commits_in_branch"] is True and labels[sid["1"]]["commits_tier"] == "heuristic"
    assert labels[sid["5"]]["commits_in_branch"] is True and labels[sid["5"]]["commits_tier"] == "verified"
    assert labels[sid["6"]]["commits_in_branch"] is False
    assert sid["3"] not in labels and sid["4"] not in labels


def test_no_text_or_credential_from_git(world, tmp_path):
    _repo, logs, _h = world
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1, git=True)
    with Store(db, read_only=True) as store:
        tables = [t for (t,) in store.con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        dump = "\n".join(str(store.query(f'SELECT * FROM "{t}"').rows()) for t in tables)
    assert "git_commit_output" in dump  # the dump holds the commits rows
    for secret in (MESSAGE, AUTHOR, EMAIL, TOKEN, "x-access-token"):
        assert secret not in dump


def test_plain_ingest_reads_no_git(world, tmp_path):
    """Without --git no repository is read and pygit2 is never imported."""
    _repo, logs, _h = world
    db = str(tmp_path / "s.duckdb")
    code = (
        "import sys\n"
        "from sessiongraph.pipeline import ingest\n"
        f"s = ingest([{str(logs)!r}], db={db!r}, workers=1)\n"
        "assert s.git == {}, s.git\n"
        "assert 'pygit2' not in sys.modules and 'sessiongraph.gitlog' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    rows = commits_rows(db)
    assert rows["tier"].to_list() == ["verified"] and rows["in_branch"].to_list() == [None]


def test_rerun_and_later_plain_ingest_keep_the_rows(world, tmp_path):
    repo, logs, h = world
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1, git=True)
    first = commits_rows(db)
    ingest([str(logs)], db=db, workers=1, git=True)
    assert commits_rows(db).equals(first)  # idempotent
    # the logs grow (one more record each) and are read again without --git: nothing lost or doubled
    for log in logs.rglob("*.jsonl"):
        last = json.loads(log.read_text().splitlines()[-1])
        log.write_text(log.read_text() + json.dumps({**last, "uuid": last["uuid"] + "-2"}) + "\n")
    summary = ingest([str(logs)], db=db, workers=1)
    assert summary.files_read == 6
    assert commits_rows(db).equals(first)
    # and --git again after that: the same rows
    ingest([str(logs)], db=db, workers=1, git=True)
    assert commits_rows(db).equals(first)
    # a log pruned takes its session's heuristic rows with it
    gone = next(logs.rglob(f"{S['1']}.jsonl"))
    gone.unlink()
    ingest([str(logs)], db=db, workers=1, prune=True)
    assert f"claude-code:{S['1']}" not in commits_rows(db)["session_id"].to_list()


def test_a_verified_row_takes_the_place_of_a_heuristic_one(world, tmp_path):
    """A log read again that now shows the commit being made: the heuristic row goes, never two rows."""
    repo, logs, h = world
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1, git=True)
    sid = f"claude-code:{S['2']}"
    assert commits_rows(db).filter(pl.col("session_id") == sid)["tier"].to_list() == ["heuristic"]
    log = next(logs.rglob(f"{S['2']}.jsonl"))
    log.write_text(
        log.read_text()
        + "".join(json.dumps(r) + "\n" for r in shell_commit(S["2"], repo, "10:35:00", "main", h["contain"][:9]))
    )
    ingest([str(logs)], db=db, workers=1)
    mine = commits_rows(db).filter(pl.col("session_id") == sid)
    assert mine.select("tier", "evidence", "commit_hash").rows() == [
        ("verified", "git_commit_output", h["contain"][:9])
    ]
    ingest([str(logs)], db=db, workers=1, git=True)  # and --git gives it in_branch, still one row
    assert commits_rows(db).filter(pl.col("session_id") == sid)["in_branch"].to_list() == [True]


def test_a_commit_from_another_working_tree_is_not_claimed(tmp_path):
    """Two working trees of one repository, both sessions wrote src/x.py: the commit made in the
    first (its HEAD reflog) is the first session's only."""
    main = new_repo(tmp_path / "lamp")
    other = tmp_path / "lamp-wt"
    git(main, "worktree", "add", "-q", "-b", "side", str(other))
    logs = tmp_path / "logs"
    transcript(logs, S["1"], main, "10:00:00", "10:10:00", [("10:01:00", "src/x.py")])
    transcript(logs, S["2"], other, "10:00:00", "10:10:00", [("10:02:00", "src/x.py")], branch="side")
    made = commit(main, "10:12:00", {"src/x.py": "x"})
    db = str(tmp_path / "s.duckdb")
    summary = ingest([str(logs)], db=db, workers=1, git=True)
    assert summary.git["repositories"] == 2
    assert commits_rows(db).select("session_id", "evidence", "commit_hash").rows() == [
        (f"claude-code:{S['1']}", "files_equal", made)
    ]


def test_bad_repositories_are_counted_never_raised(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    # a workspace gone from disk, one in no repository, a bare repository
    transcript(logs, S["1"], tmp_path / "gone", "10:00:00", "10:05:00", [("10:01:00", "a.py")])
    plain = tmp_path / "plain"
    plain.mkdir()
    transcript(logs, S["2"], plain, "10:00:00", "10:05:00", [("10:01:00", "a.py")])
    bare = tmp_path / "bare.git"
    bare.mkdir()
    git(bare, "init", "-q", "--bare")
    transcript(logs, S["3"], bare, "10:00:00", "10:05:00", [("10:01:00", "a.py")])
    # a corrupt repository: its HEAD names no valid reference
    broken = new_repo(tmp_path / "broken")
    (broken / ".git" / "HEAD").write_text("garbage\n")
    transcript(logs, S["4"], broken, "10:00:00", "10:05:00", [("10:01:00", "a.py")])
    # a shallow clone whose edge commit is in the window, and a long history walked only so far
    source = new_repo(tmp_path / "source")
    for i in range(5):
        commit(source, f"10:0{i}:30", {f"src/{i}.py": str(i)})
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(shallow))
    transcript(logs, S["5"], shallow, "10:00:00", "10:05:00", [("10:01:00", "src/9.py")])
    transcript(logs, S["6"], source, "10:00:00", "10:05:00", [("10:01:00", "src/9.py")])
    monkeypatch.setattr(gitlog, "MAX_WALK", 3)
    db = str(tmp_path / "s.duckdb")
    summary = ingest([str(logs)], db=db, workers=1, git=True)
    assert summary.git["problems"] == {
        "bare_repository": 1,
        "cwd_missing": 1,
        "not_a_repository": 1,
        "shallow_boundary": 1,
        "unreadable_repository": 1,
        "walk_cut": 1,
    }
    assert summary.git["repositories"] == 2 and summary.git["sessions"] == 2
    assert len(summary.git["messages"]) == 1 and str(broken) in summary.git["messages"][0]
    assert commits_rows(db).height == 0
    # the CLI prints the counts
    from click.testing import CliRunner

    from sessiongraph.cli import main

    out = CliRunner().invoke(main, ["ingest", str(logs), "--db", db, "--git"])
    assert out.exit_code == 0, out.output
    assert "Git: 2 repositories read (2 sessions)" in out.output and "cwd_missing 1" in out.output


def test_pruned_repository_keeps_the_earlier_rows(world, tmp_path):
    """A repository that cannot be read now: its sessions keep what an earlier --git found."""
    repo, logs, _h = world
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1, git=True)
    first = commits_rows(db)
    shutil.rmtree(repo)
    summary = ingest([str(logs)], db=db, workers=1, git=True)
    assert summary.git["problems"] == {"cwd_missing": 6} and summary.git["repositories"] == 0
    assert commits_rows(db).equals(first)


def test_a_cut_walk_keeps_the_rows_of_the_sessions_it_did_not_reach(world, tmp_path, monkeypatch):
    """A history grown past MAX_WALK since the last --git: the sessions older than where the walk
    stopped keep the rows found before (counted), the newer ones are matched again."""
    _repo, logs, _h = world
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1, git=True)
    first = commits_rows(db)
    with Store(db) as store:  # marks the rows found first: a row matched again is written anew
        store.con.execute("UPDATE commits SET ingest_id = -1 WHERE tier = 'heuristic'")
    monkeypatch.setattr(gitlog, "MAX_WALK", 2)  # walked: 14:10 (reset away), 13:30; stopped at 13:05
    summary = ingest([str(logs)], db=db, workers=1, git=True)
    assert summary.git["problems"] == {"walk_cut": 4}  # sessions 1-4 (which wrote there) start before 13:05
    assert commits_rows(db).equals(first)
    with Store(db, read_only=True) as store:
        kept = store.query("SELECT session_id, ingest_id = -1 AS kept FROM commits WHERE tier = 'heuristic'")
    assert sorted(kept.rows()) == [
        (f"claude-code:{S['1']}", True),
        (f"claude-code:{S['2']}", True),
        (f"claude-code:{S['6']}", False),
    ]


def test_a_commit_of_two_sessions_is_each_ones_and_counted_once(tmp_path):
    """Two sessions in a row, each wrote one file, one commit holds both: a files_contain row each
    (each session's dollars went into it), one commit on the branch."""
    repo = new_repo(tmp_path / "lamp")
    logs = tmp_path / "logs"
    transcript(logs, S["1"], repo, "10:00:00", "10:05:00", [("10:01:00", "src/a.py")])
    transcript(logs, S["2"], repo, "10:06:00", "10:10:00", [("10:07:00", "src/b.py")])
    made = commit(repo, "10:12:00", {"src/a.py": "a", "src/b.py": "b"})
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1, git=True)
    assert commits_rows(db).select("session_id", "evidence", "commit_hash", "in_branch").rows() == [
        (f"claude-code:{S['1']}", "files_contain", made, True),
        (f"claude-code:{S['2']}", "files_contain", made, True),
    ]
    with Store(db, read_only=True) as store:
        assert store.query("SELECT branch, runs, commits FROM branch_costs").rows() == [("main", 2, 1)]
        per_commit = store.query("SELECT sum(session_usd) AS usd FROM commit_costs")["usd"][0]
        sessions = store.query("SELECT sum(usd) AS usd FROM session_costs")["usd"][0]
        assert report.build(store).branches.select("branch", "runs", "commits").rows() == [("main", 2, 1)]
    assert per_commit == pytest.approx(sessions) and per_commit > 0


def test_a_crash_while_writing_leaves_the_last_rows(world, tmp_path, monkeypatch):
    """Killed in the middle of writing what --git found: the store holds the earlier run's rows,
    none of the new ones (one transaction); the next run writes the new ones."""
    repo, logs, h = world
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1, git=True)
    first = commits_rows(db)
    git(repo, "reset", "-q", "--hard", "HEAD~4")  # main keeps 08:00 and 10:15; feat/x still holds the rest

    class Killed:
        """The store's connection, interrupted at Store.write_git's last insert."""

        def __init__(self, con):
            self._con = con

        def execute(self, sql, *args):
            if sql.startswith("INSERT INTO commit_checks"):
                raise KeyboardInterrupt
            return self._con.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self._con, name)

    real = Store.con
    with monkeypatch.context() as m:
        m.setattr(Store, "con", property(lambda self: Killed(real.fget(self))))
        with pytest.raises(KeyboardInterrupt):
            ingest([str(logs)], db=db, workers=1, git=True)
    assert commits_rows(db).equals(first)
    ingest([str(logs)], db=db, workers=1, git=True)
    now = {c: (b, flag) for c, b, flag in commits_rows(db).select("commit_hash", "branch", "in_branch").rows()}
    assert now[h["equal"]] == ("main", True)
    assert now[h["contain"]] == ("feat/x", True)  # a heuristic row's branch: a local branch holding it
    assert now[h["verified"][:7]] == ("main", False)  # a verified row's branch is its log's


def test_a_workspace_below_the_root_or_through_a_link(tmp_path):
    """A session whose cwd is a folder inside the working tree, and one that reached the tree
    through a symbolic link: their writes match in the tree's own paths."""
    repo = new_repo(tmp_path / "lamp")
    (repo / "pkg").mkdir()
    link = tmp_path / "lamp-link"
    link.symlink_to(repo)
    logs = tmp_path / "logs"
    transcript(logs, S["1"], repo / "pkg", "10:00:00", "10:05:00", [("10:01:00", "x.py")])
    below = commit(repo, "10:08:00", {"pkg/x.py": "x"})
    transcript(logs, S["2"], link, "11:00:00", "11:05:00", [("11:01:00", "src/y.py")])
    linked = commit(repo, "11:08:00", {"src/y.py": "y"})
    db = str(tmp_path / "s.duckdb")
    summary = ingest([str(logs)], db=db, workers=1, git=True)
    assert commits_rows(db).select("session_id", "evidence", "commit_hash", "in_branch").rows() == [
        (f"claude-code:{S['1']}", "files_equal", below, True),
        (f"claude-code:{S['2']}", "files_equal", linked, True),
    ]
    assert summary.git["repositories"] == 1 and summary.git["problems"] == {}
