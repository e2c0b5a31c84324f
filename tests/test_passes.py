"""Each inference pass on small hand-built frames: one rule per test, with its distractors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from sessiongraph.inference import infer
from sessiongraph.inference.artifacts import artifacts
from sessiongraph.inference.continuation import continuation
from sessiongraph.inference.edges import Inferred, PassResult
from sessiongraph.inference.launch import launch
from sessiongraph.inference.spawn import spawn
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.shell_facts import shell_facts

T0 = datetime(2026, 1, 5, 10, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def session(sid: str, start: float, **kw) -> dict:
    harness, native = sid.split(":", 1)
    row = {
        "session_id": sid,
        "harness": harness,
        "native_id": native.split("/")[0],
        "session_kind": "main",
        "layout": "main" if harness == "claude-code" else "rollout",
        "source_path": f"/logs/{native}.jsonl",
        "started_at": at(start),
        "ended_at": at(start + 60),
        "cwd": "/w",
    }
    row.update(kw)
    return row


def call(sid: str, call_id: str, kind: str, start: float, end: float | None = None, **kw) -> dict:
    row = {
        "session_id": sid,
        "call_id": call_id,
        "tool": {"spawn": "Task", "shell": "Bash"}.get(kind, kind),
        "kind": kind,
        "started_at": at(start),
        "ended_at": at(end) if end is not None else None,
        "cwd": "/w",
        "paths": [],
        "output_ids": [],
        "source_path": "/logs/x.jsonl",
        "line": 1,
    }
    row.update(kw)
    return row


def edges_of(result) -> set[tuple]:
    return set(result.edges.select("kind", "src", "dst", "tier").iter_rows())


def codes(result) -> dict[str, int]:
    return dict(result.diagnostics.group_by("code").agg(pl.col("count").sum()).iter_rows())


# -- spawn --------------------------------------------------------------------------------------

P = "claude-code:p"


def test_spawn_routes_and_exclusions():
    frames = Frames.from_rows(
        sessions=[
            session(P, 0),
            session(f"{P}/a1", 5, agent_id="a1", session_kind="subagent", layout="nested", parent_native_id="p"),
            # nested: meta.json names the call in a1's own file and a1 as its parent agent
            session(
                f"{P}/a2",
                8,
                agent_id="a2",
                session_kind="subagent",
                layout="nested",
                parent_native_id="p",
                parent_tool_use_id="t2",
                parent_agent_id="a1",
                spawn_depth=2,
            ),
            # only the layout ties it to p
            session(f"{P}/a3", 9, agent_id="a3", session_kind="subagent", layout="flat", parent_native_id="p"),
            # declares a parent agent, but no call names it
            session(
                f"{P}/a4",
                9,
                agent_id="a4",
                session_kind="subagent",
                layout="nested",
                parent_native_id="p",
                parent_agent_id="a1",
            ),
            # same prompt as call t5, nothing else
            session(
                f"{P}/a5",
                9,
                agent_id="a5",
                session_kind="subagent",
                layout="nested",
                parent_native_id="p",
                first_prompt_hash="h5",
            ),
            session(f"{P}/acompact-1", 20, agent_id="acompact-1", session_kind="compaction", layout="nested"),
            session(f"{P}/w", 1, agent_id="w", session_kind="warmup", layout="flat"),
            # its main transcript is not in the store
            session(
                "claude-code:gone/a9", 3, agent_id="a9", session_kind="subagent", layout="nested", native_id="gone"
            ),
        ],
        calls=[
            call(P, "t1", "spawn", 4, 30, result_agent_id="a1"),
            call(f"{P}/a1", "t2", "spawn", 7, 20),
            call(P, "t5", "spawn", 8, 30, prompt_hash="h5"),
            call(P, "t6", "spawn", 9, 30, result_agent_id="zzz"),  # names a child not on disk
        ],
    )
    res = spawn(frames, Inferred())
    assert edges_of(res) == {
        ("spawn", P, f"{P}/a1", "verified"),
        ("spawn", f"{P}/a1", f"{P}/a2", "verified"),
        ("spawn", P, f"{P}/a3", "heuristic"),
        ("spawn", f"{P}/a1", f"{P}/a4", "reported"),
        ("spawn", P, f"{P}/a5", "heuristic"),
    }
    assert codes(res) == {"dangling_spawn": 1, "orphan_child": 1, "not_a_spawn": 2}
    a2 = res.edges.filter(pl.col("dst") == f"{P}/a2").row(0, named=True)
    assert a2["src_call_id"] == "t2"
    assert a2["evidence"] == "meta.json toolUseId + meta.json parentAgentId"
    assert a2["lag_s"] == 1.0


def test_spawn_teammates_pair_by_name_team_and_time():
    """A teammate is the child of the lead's named Agent call: of its team, the latest started
    before it; verified only when the result's <name>@<team> agrees, never by type alone."""

    def mate(agent: str, start: float, name: str, team: str | None = "t1") -> dict:
        kw = {"agent_id": agent, "session_kind": "subagent", "layout": "nested", "parent_native_id": "p"}
        return session(f"{P}/{agent}", start, agent_name=name, team_name=team, **kw)

    def named(call_id: str, start: float, name: str, team: str, result: str | None) -> dict:
        return call(
            P, call_id, "spawn", start, start + 1, tool="Agent", agent_name=name, team_name=team, result_agent_id=result
        )

    frames = Frames.from_rows(
        sessions=[
            session(P, 0),
            mate("k1", 5, "rev"),
            mate("k2", 5, "rev"),  # a second file of the same teammate
            mate("k3", 25, "rev", team="t2"),  # the same name in the next team
            mate("k4", 6, "doc", team=None),  # its records name no team
            mate("k5", 7, "qa"),  # the call's result says someone else
            # a plain subagent whose type equals a teammate's name: no agent_name, no pairing
            session(f"{P}/k6", 8, agent_id="k6", session_kind="subagent", layout="nested", agent_type="rev"),
        ],
        calls=[
            named("c0", 1, "rev", "t1", "rev@t1"),
            named("c1", 4, "rev", "t1", "rev@t1"),  # a later call of the same name: the one that ran it
            named("c2", 20, "rev", "t2", "rev@t2"),
            named("c3", 4, "doc", "t1", "doc@t1"),
            named("c4", 4, "qa", "t1", None),
        ],
    )
    res = spawn(frames, Inferred())
    got = set(res.edges.select("dst", "src_call_id", "tier").iter_rows())
    assert got == {
        (f"{P}/k1", "c1", "verified"),
        (f"{P}/k2", "c1", "verified"),
        (f"{P}/k3", "c2", "verified"),
        (f"{P}/k4", "c3", "verified"),
        (f"{P}/k5", "c4", "heuristic"),
        (f"{P}/k6", None, "heuristic"),  # its folder only
    }
    assert codes(res) == {"dangling_spawn": 1}  # c0: its teammate was re-spawned by c1


def test_spawn_workflow_run_and_its_agents():
    run = f"{P}/wf_1"
    frames = Frames.from_rows(
        sessions=[
            session(P, 0),
            session(
                run,
                2,
                agent_id="wf_1",
                session_kind="workflow",
                layout="journal",
                parent_native_id="p",
                started_at=None,
            ),
            *[
                session(
                    f"{P}/{a}",
                    3,
                    agent_id=a,
                    session_kind="workflow",
                    layout="workflow",
                    parent_native_id="p",
                    parent_agent_id=f,
                )
                for a, f in (("w1", "wf_1"), ("w2", "wf_1"), ("w3", "wf_2"))
            ],
        ],
        calls=[
            call(P, "wf", "spawn", 1, 30, tool="Workflow", result_agent_id="wf_1"),
            call(P, "wf2", "spawn", 1, 30, tool="Workflow", result_agent_id="wf_2"),
            call(run, "line2", "spawn", 2, None, tool="journal:started", result_agent_id="w1"),
        ],
    )
    res = spawn(frames, Inferred())
    got = set(res.edges.select("src", "dst", "src_call_id", "tier").iter_rows())
    assert got == {
        (P, run, "wf", "verified"),  # the journal's folder is the Workflow call's runId
        (run, f"{P}/w1", "line2", "verified"),  # the journal started it
        (run, f"{P}/w2", None, "heuristic"),  # in the run's folder, not in its journal
        (P, f"{P}/w3", "wf2", "verified"),  # a run without a journal: the call, by folder
    }
    assert codes(res) == {}


def test_codex_thread_spawn_is_verified_with_or_without_the_parent_event():
    frames = Frames.from_rows(
        sessions=[
            session("codex:par", 0),
            session("codex:kid1", 5, session_kind="subagent", parent_native_id="par"),
            session("codex:kid2", 6, session_kind="subagent", parent_native_id="par"),
            session("codex:kid3", 7, session_kind="subagent", parent_native_id="missing"),
        ],
        calls=[call("codex:par", "c1", "spawn", 4, 5, tool="spawn_agent", result_agent_id="kid1")],
    )
    res = spawn(frames, Inferred())
    assert edges_of(res) == {
        ("spawn", "codex:par", "codex:kid1", "verified"),
        ("spawn", "codex:par", "codex:kid2", "verified"),
    }
    by_dst = dict(res.edges.select("dst", "src_call_id").iter_rows())
    assert by_dst == {"codex:kid1": "c1", "codex:kid2": None}
    assert codes(res) == {"orphan_child": 1}


# -- launch -------------------------------------------------------------------------------------

L = "claude-code:lead"


def launch_frames(children: list[dict], calls: list[dict]) -> Frames:
    # shell_facts: as pipeline.parse_file hands frames over, launches read out of the commands.
    return shell_facts(Frames.from_rows(sessions=[session(L, -100), *children], calls=calls))


def test_launch_window_cwd_and_entrypoint_rules():
    children = [
        session("codex:good", 2, entrypoint="exec"),
        session("codex:othercwd", 3, entrypoint="exec", cwd="/elsewhere"),
        session("codex:before", -1, entrypoint="exec"),
        session("codex:tui", 4, entrypoint="cli"),
        session("codex:late", 300, entrypoint="exec"),
    ]
    calls = [call(L, "b1", "shell", 0, 40, command='codex exec "summarise"')]
    res = launch(launch_frames(children, calls), Inferred())
    assert edges_of(res) == {("launch", L, "codex:good", "heuristic")}
    e = res.edges.row(0, named=True)
    assert (e["src_call_id"], e["lag_s"]) == ("b1", 2.0)
    assert "entrypoint exec" in e["evidence"]


def test_launch_verified_by_printed_id_and_cd_and_background():
    children = [
        session("codex:printed", 5, entrypoint="exec", cwd="/somewhere/else"),
        session("codex:bg", 200, entrypoint="exec", cwd="/w/sub"),
        session("claude-code:sdk", 12, entrypoint="sdk-cli", cwd="/w"),
        session("claude-code:interactive", 11, entrypoint="cli", cwd="/w"),
    ]
    calls = [
        call(L, "b1", "shell", 0, 40, command="codex exec review", output_ids=["printed"]),
        call(L, "b2", "shell", 100, 101, command='cd sub && nohup codex exec "lint" > /tmp/l.log 2>&1 &'),
        call("codex:printed", "x1", "shell", 10, 30, command='claude -p "check" --output-format json'),
    ]
    res = launch(launch_frames(children, calls), Inferred())
    assert edges_of(res) == {
        ("launch", L, "codex:printed", "verified"),
        ("launch", L, "codex:bg", "heuristic"),
        ("launch", "codex:printed", "claude-code:sdk", "heuristic"),
    }


def test_launch_ties_go_to_the_smallest_lag_and_are_counted():
    children = [session("codex:a", 3, entrypoint="exec"), session("codex:b", 1, entrypoint="exec")]
    calls = [call(L, "b1", "shell", 0, 40, command="codex exec one")]
    res = launch(launch_frames(children, calls), Inferred())
    assert edges_of(res) == {("launch", L, "codex:b", "heuristic")}
    assert codes(res) == {"ambiguous_launch": 1}
    looped = [call(L, "b1", "shell", 0, 40, command='for t in a b; do codex exec "$t"; done')]
    res = launch(launch_frames(children, looped), Inferred())
    assert {e[2] for e in edges_of(res)} == {"codex:a", "codex:b"}


def test_launch_without_a_session_is_counted_and_resume_never_matches():
    calls = [
        call(L, "b1", "shell", 0, 40, command="codex exec lonely"),
        call(L, "b2", "shell", 50, 90, command="codex exec resume --last"),
        call(L, "b3", "shell", 95, 96, command="codex --version"),
    ]
    res = launch(launch_frames([session("codex:old", 60, entrypoint="exec")], calls), Inferred())
    assert edges_of(res) == set()
    assert codes(res) == {"unmatched_launch": 2}


def test_a_spawned_child_is_never_a_launch_child():
    kid = session("codex:kid", 2, entrypoint="exec")
    calls = [call(L, "b1", "shell", 0, 40, command="codex exec x")]
    frames = launch_frames([kid], calls)
    assert edges_of(launch(frames, Inferred())) == {("launch", L, "codex:kid", "heuristic")}
    done = Inferred()
    done.add(
        PassResult(
            pl.DataFrame({"kind": ["spawn"], "src": ["codex:p"], "dst": ["codex:kid"], "tier": ["verified"]}),
            PassResult.empty().diagnostics,
        )
    )
    assert edges_of(launch(frames, done)) == set()


def _answer(text: str) -> str:
    from sessiongraph.ingest.jsonl import answer_hash

    digest = answer_hash(text)
    assert digest is not None
    return digest


def test_print_mode_launch_is_verified_by_the_output_hash_in_any_cwd():
    hi = _answer("Hi there!")
    children = [
        session("claude-code:answered", 3, entrypoint="sdk-cli", cwd="/elsewhere", final_answer_hash=hi),
        session("claude-code:nearer", 2, entrypoint="sdk-cli", final_answer_hash=_answer("other")),
        session("claude-code:late", 40, entrypoint="sdk-cli", cwd="/elsewhere", final_answer_hash=hi),
    ]
    calls = [call(L, "b1", "shell", 0, 10, command='echo x | timeout 15 claude --debug -p "say hi"', output_hash=hi)]
    res = launch(launch_frames(children, calls), Inferred())
    assert edges_of(res) == {("launch", L, "claude-code:answered", "verified")}
    assert "final answer = the call's output (sha256)" in res.edges["evidence"][0]
    # The same output hash from a call that ended before the session began ties nothing.
    calls = [call(L, "b1", "shell", 0, 10, command='claude --print "say hi"', output_hash=hi)]
    res = launch(launch_frames(children[2:], calls), Inferred())
    assert edges_of(res) == set()
    assert codes(res) == {"unmatched_launch": 1}


def test_two_identical_prompts_seconds_apart_each_take_their_own_session():
    hi = _answer("hi")  # the same prompt, the same answer: only time tells them apart
    children = [
        session("claude-code:first", 2, entrypoint="sdk-cli", final_answer_hash=hi),
        session("claude-code:second", 11, entrypoint="sdk-cli", final_answer_hash=hi),  # inside b1's slack too
    ]
    command = 'echo x | timeout 15 claude -p "say hi"'
    calls = [
        call(L, "b2", "shell", 10, 16, command=command, output_hash=hi, line=2),
        call(L, "b1", "shell", 0, 8, command=command, output_hash=hi, line=1),
    ]
    res = launch(launch_frames(children, calls), Inferred())
    got = set(res.edges.select("src_call_id", "dst", "tier").iter_rows())
    assert got == {("b1", "claude-code:first", "verified"), ("b2", "claude-code:second", "verified")}


def test_a_wrapper_is_a_launcher_when_named_or_tied_by_the_output_hash():
    hi, built = _answer("hello"), _answer("built")
    children = [
        session("claude-code:sdk", 3, entrypoint="sdk-cli", final_answer_hash=hi),
        session("claude-code:tui", 23, entrypoint="cli", final_answer_hash=built),  # interactive: never tied
    ]
    wrapper = 'node claude-wrapper.js --print "say hello"'
    calls = [
        call(L, "w1", "shell", 0, 10, command=wrapper, output_hash=hi, line=1),
        call(L, "w2", "shell", 20, 30, command="node build.js", output_hash=built, line=2),
    ]
    res = launch(launch_frames(children, calls), Inferred())
    assert edges_of(res) == {("launch", L, "claude-code:sdk", "verified")}
    assert "read as no agent CLI" in res.edges["evidence"][0]
    assert codes(res) == {}  # a call read as no launch is never an unmatched one
    # Named (--launcher claude-wrapper.js=claude-code), it is a launch by cwd and time alone.
    named = [call(L, "w1", "shell", 0, 10, command=wrapper)]
    frames = Frames.from_rows(sessions=[session(L, -100), *children], calls=named)
    res = launch(shell_facts(frames, launchers=(("claude-wrapper.js", "claude-code"),)), Inferred())
    assert edges_of(res) == {("launch", L, "claude-code:sdk", "heuristic")}


# -- artifacts ----------------------------------------------------------------------------------


def fe(sid: str, call_id: str, ts: float, path: str, op: str, tier: str = "verified") -> dict:
    return {
        "session_id": sid,
        "call_id": call_id,
        "ts": at(ts),
        "path": path,
        "op": op,
        "how": "Write" if op == "write" else "Read",
        "tier": tier,
        "source_path": "/logs/x.jsonl",
        "line": 1,
    }


def test_reads_join_the_latest_earlier_version_by_another_session():
    a, b, c = "claude-code:a", "claude-code:b", "codex:c"
    frames = Frames.from_rows(
        sessions=[session(a, 0), session(b, 0), session(c, 0)],
        file_events=[
            fe(b, "r0", 1, "/w/f", "read"),  # before any write
            fe(a, "w1", 2, "/w/f", "write"),
            fe(b, "w2", 5, "/w/f", "write"),
            fe(b, "r1", 6, "/w/f", "read"),  # latest version is its own; joins a's v1
            fe(c, "r2", 7, "/w/f", "read", tier="reported"),  # joins b's v2, reported end
            fe(c, "r3", 8, "/w/f", "read"),  # same version again: one edge, strongest tier
            fe(a, "r4", 9, "/w/nobody", "read"),
        ],
    )
    res = artifacts(frames, Inferred())
    got = set(res.edges.select("src", "dst", "version", "tier", "src_tier", "dst_tier").iter_rows())
    assert got == {(a, b, 1, "verified", "verified", "verified"), (b, c, 2, "verified", "verified", "verified")}
    assert codes(res) == {"read_before_write": 1, "read_unwritten": 1}
    versions = res.tables["artifacts"].select("path", "version", "producer", "n_writes", "n_reads", "consumers").rows()
    assert versions == [("/w/f", 1, a, 2, 1, [b]), ("/w/f", 2, b, 2, 2, [c])]


def test_shell_writes_are_heuristic_and_codex_o_belongs_to_the_launched_session():
    lead, kid, reader = "claude-code:lead", "codex:kid", "claude-code:r"
    frames = shell_facts(
        Frames.from_rows(
            sessions=[session(lead, 0), session(kid, 11, entrypoint="exec"), session(reader, 0)],
            calls=[
                call(lead, "s1", "shell", 1, 2, command="echo hi > notes/plan.md"),
                call(lead, "s2", "shell", 10, 30, command='codex exec "notes" -o out.md'),
            ],
            file_events=[
                fe(reader, "r1", 40, "/w/notes/plan.md", "read", tier="reported"),
                fe(reader, "r2", 41, "/w/out.md", "read"),
            ],
        )
    )
    done = Inferred()
    done.add(launch(frames, done))
    res = artifacts(frames, done)
    got = set(res.edges.select("src", "dst", "path", "tier").iter_rows())
    assert got == {(lead, reader, "/w/notes/plan.md", "reported"), (kid, reader, "/w/out.md", "heuristic")}


# -- continuation -------------------------------------------------------------------------------


def test_continuations_and_forks():
    frames = Frames.from_rows(
        sessions=[
            session("claude-code:old", 0, slug="brave-otter"),
            session("claude-code:new", 100, slug="brave-otter", continued_from_id="old"),
            session("claude-code:third", 200, slug="brave-otter"),
            session("claude-code:orphan", 300, continued_from_id="never-ingested"),
            session("codex:base", 0),
            session("codex:fork", 50, forked_from_id="base"),
        ]
    )
    res = continuation(frames, Inferred())
    assert edges_of(res) == {
        ("continue", "claude-code:old", "claude-code:new", "verified"),
        ("continue", "claude-code:new", "claude-code:third", "heuristic"),
        ("fork", "codex:base", "codex:fork", "verified"),
    }
    assert codes(res) == {"continuation_source_missing": 1}


# -- runs ---------------------------------------------------------------------------------------


def test_runs_group_spawns_and_launches_and_keep_cross_run_edges_apart():
    lead, kid, cli, other = "claude-code:lead", "claude-code:lead/k", "codex:cli", "claude-code:other"
    frames = shell_facts(
        Frames.from_rows(
            sessions=[
                session(lead, 0),
                session(kid, 5, agent_id="k", session_kind="subagent", layout="nested", parent_native_id="lead"),
                session(cli, 12, entrypoint="exec"),
                session(other, 500),
            ],
            calls=[
                call(lead, "t1", "spawn", 4, 30, result_agent_id="k"),
                call(kid, "b1", "shell", 10, 20, command="codex exec go"),
            ],
            file_events=[fe(cli, "w", 15, "/w/a", "write"), fe(other, "r", 600, "/w/a", "read")],
        )
    )
    inferred = infer(frames)
    members = set(inferred.run_sessions.select("session_id", "depth", "via").iter_rows())
    assert members == {(lead, 0, None), (kid, 1, "spawn"), (cli, 2, "launch"), (other, 0, None)}
    runs = dict(inferred.run_sessions.select("session_id", "run_id").iter_rows())
    assert runs[lead] == runs[kid] == runs[cli] != runs[other]
    assert infer(frames).runs.equals(inferred.runs)  # stable ids
    cross = inferred.edges.filter(pl.col("kind") == "artifact").row(0, named=True)
    assert cross["run_id"] is None
    assert inferred.edges.filter(pl.col("kind") != "artifact")["run_id"].null_count() == 0
    roles = dict(inferred.run_sessions.select("session_id", "role").iter_rows())
    assert roles == {lead: "lead", kid: "subagent", cli: "cli", other: "solo"}
    assert inferred.diagnostics.filter(pl.col("code") == "pass_failed").height == 0


def test_other_harnesses_spawn_by_the_parent_the_child_records():
    frames = Frames.from_rows(
        sessions=[
            session("omp:root", 0),
            session("omp:root/Scout", 5, agent_id="Scout", session_kind="subagent", parent_native_id="root"),
            session(
                "omp:root/Scout.Deep", 6, agent_id="Scout.Deep", session_kind="subagent", parent_native_id="root/Scout"
            ),
            session("opencode:ses_b", 7, session_kind="subagent", parent_native_id="ses_a"),  # parent not ingested
        ],
        calls=[call("omp:root", "t1", "spawn", 4, 20, tool="task", result_agent_id="Scout")],
    )
    res = spawn(frames, Inferred())
    got = set(res.edges.select("src", "dst", "src_call_id", "tier", "evidence").iter_rows())
    assert got == {
        (
            "omp:root",
            "omp:root/Scout",
            "t1",
            "verified",
            "task folder <root stem>/<id>.jsonl + task result names the agent id",
        ),
        # no call names it: for oh-my-pi the folder alone is layout evidence
        ("omp:root/Scout", "omp:root/Scout.Deep", None, "heuristic", "task folder <root stem>/<id>.jsonl"),
    }
    assert codes(res) == {"orphan_child": 1}


def test_other_harnesses_forks_causes_and_dependencies():
    frames = Frames.from_rows(
        sessions=[
            session("pi:a", 0),
            session("pi:b", 10, forked_from_id="a"),
            session("prickle:t1", 0),
            session("prickle:t2", 5, caused_by_id="t1", depends_on=["t1", "t0"]),
            session("prickle:t0", 1),
        ]
    )
    res = continuation(frames, Inferred())
    assert edges_of(res) == {
        ("fork", "pi:a", "pi:b", "reported"),
        ("continue", "prickle:t1", "prickle:t2", "verified"),
        ("dep", "prickle:t1", "prickle:t2", "reported"),
        ("dep", "prickle:t0", "prickle:t2", "reported"),
    }
