"""spawn: which call started which subagent.

Routes, strongest first (harness-log-formats.md 1.6, 2.7):
- verified: the parent's Task/Agent result names the child's agent id; the child's meta.json
  ``toolUseId`` is the parent's call id; ``agent_progress`` records tie the agent id to the
  call; a Codex child's ``thread_spawn.parent_thread_id`` (with the parent's call whose output,
  ``collab_agent_spawn_end`` or 0.14x ``sub_agent_activity`` names the child); an inline (<= 2.0.27) sidechain that sits between
  a Task call and its result and repeats its prompt; a Claude teammate whose name the lead's
  Agent call (``name``/``team_name``), its ``teammate_spawned`` result and its meta.json agree on;
  a workflow run (its journal) whose folder the Workflow result names, an agent its journal
  started (no journal: the Workflow call whose runId is the agent's folder).
- heuristic: the child's first prompt equals a spawn call's prompt; a teammate named by a call
  whose result does not say so; directory layout alone (a workflow agent's: its run's folder).
- verified, across logs: an oh-my-opencode transcript's spawn result (task, delegate_task,
  call_omo_agent ...) names the child opencode session (its transcript, or its opencode session),
  which does not record its parent; a background launch's task id, by the later background_output
  that names its session.
- reported: a parent only the child declares (meta.json ``parentAgentId`` with no call to match).
Compaction runs, warm-ups and Codex review/guardian helpers are never spawns (runs._helpers).
A session is never its own parent, and one parent is chosen the same way whatever the rows' order.
"""

from __future__ import annotations

import polars as pl

from sessiongraph.inference.edges import EDGES, Inferred, PassResult, conform, diag_rows
from sessiongraph.inference.nodes import call_sessions, nodes
from sessiongraph.inference.tiers import rank
from sessiongraph.ingest.frames import Frames

NAME = "spawn"
CHILD_KINDS = ("subagent", "workflow")
NOT_SPAWNS = ("compaction", "warmup", "review", "guardian")
_CAND = ["dst", "src", "src_call_id", "tier", "evidence"]


def spawn(frames: Frames, done: Inferred) -> PassResult:
    ns = nodes(frames)
    calls = call_sessions(frames, ns).filter(pl.col("kind") == "spawn")
    children = ns.filter(pl.col("session_kind").is_in(CHILD_KINDS))
    cands = pl.concat(
        [
            _claude_by_call(children, calls),
            _claude_teammates(children, calls),
            _claude_workflow_agents(children, calls),
            _claude_by_layout(children, ns),
            _recorded_parent(children, ns, calls),
            _call_running(children, calls),
            _named_by_call(ns, calls),
            _by_calling_call(children, calls),
        ],
        how="vertical",
    )
    best = _best(cands)
    known = set(ns["session_id"])
    edges = (
        best.join(ns.select(pl.col("session_id").alias("dst"), pl.col("started_at").alias("child_start")), on="dst")
        .join(
            frames.calls.select(
                pl.col("session_id").alias("src"),
                pl.col("call_id").alias("src_call_id"),
                pl.col("started_at").alias("ts"),
            ),
            on=["src", "src_call_id"],
            how="left",
        )
        .with_columns(
            kind=pl.lit("spawn"),
            **{"pass": pl.lit(NAME)},
            ts=pl.coalesce("ts", "child_start"),
        )
        .with_columns(lag_s=(pl.col("child_start") - pl.col("ts")).dt.total_microseconds() / 1_000_000)
        .filter(pl.col("src").is_in(known))
        .drop("child_start")
    )
    used = edges.select(pl.col("src").alias("session_id"), pl.col("src_call_id").alias("call_id"))
    dangling = calls.join(used, on=["session_id", "call_id"], how="anti")
    orphans = children.join(edges.select(pl.col("dst").alias("session_id")), on="session_id", how="anti")
    skipped = ns.filter(pl.col("session_kind").is_in(NOT_SPAWNS))
    diags = pl.concat(
        [
            diag_rows(
                NAME,
                "dangling_spawn",
                dangling,
                pl.when(pl.coalesce("result_agent_id", "progress_agent_id").is_not_null())
                .then(
                    pl.lit("names child ")
                    + pl.coalesce("result_agent_id", "progress_agent_id")
                    + pl.lit(", not on disk")
                )
                .otherwise(pl.lit("no child found")),
            ),
            diag_rows(NAME, "orphan_child", orphans, "no parent session or call found"),
            diag_rows(NAME, "not_a_spawn", skipped, pl.col("session_kind")),
        ]
    )
    return PassResult(conform(edges, EDGES), diags)


# Evidence a call's result names the child, by the call's tool: a Workflow result names its run
# (runId, the wf_<runId> folder), a journal's started line the agent it started.
RESULT_NAMES = {
    "Workflow": "Workflow toolUseResult.runId",
    "journal:started": "journal started agentId",
}


def _claude_by_call(children: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """Child <-> the spawn call in the same Claude session tree that names it."""
    kids = children.filter(pl.col("harness") == "claude-code").select(
        pl.col("session_id").alias("dst"), "native_id", "agent_id", "parent_tool_use_id", "first_prompt_hash", "layout"
    )
    c = calls.filter(pl.col("harness") == "claude-code").select(
        pl.col("session_id").alias("src"),
        "native_id",
        pl.col("call_id").alias("src_call_id"),
        "tool",
        "result_agent_id",
        "progress_agent_id",
        "prompt_hash",
    )
    routes = [
        # (child column, call column, tier, evidence)
        ("agent_id", "result_agent_id", "verified", "toolUseResult.agentId"),
        ("agent_id", "progress_agent_id", "verified", "agent_progress parentToolUseID"),
        ("parent_tool_use_id", "src_call_id", "verified", "meta.json toolUseId"),
        ("first_prompt_hash", "prompt_hash", "heuristic", "same prompt"),
    ]
    parts = []
    for kid_col, call_col, tier, evidence in routes:
        m = kids.filter(pl.col(kid_col).is_not_null()).join(
            c.filter(pl.col(call_col).is_not_null()),
            left_on=["native_id", kid_col],
            right_on=["native_id", call_col],
            how="inner",
            coalesce=False,
        )
        if kid_col == "parent_tool_use_id":
            # Inline sidechains were placed by position in the parent's file: verified when the
            # prompt matches too, else position alone.
            inline = pl.col("layout") == "inline"
            same_prompt = pl.col("first_prompt_hash") == pl.col("prompt_hash")
            m = m.with_columns(
                tier=pl.when(inline & ~same_prompt.fill_null(False)).then(pl.lit("heuristic")).otherwise(pl.lit(tier)),
                evidence=pl.when(inline).then(pl.lit("inline sidechain within the call")).otherwise(pl.lit(evidence)),
            )
        elif call_col == "result_agent_id":
            m = m.with_columns(
                tier=pl.lit(tier), evidence=pl.col("tool").replace_strict(RESULT_NAMES, default=evidence)
            )
        else:
            m = m.with_columns(tier=pl.lit(tier), evidence=pl.lit(evidence))
        parts.append(m.select(_CAND))
    return pl.concat(parts)


def _claude_teammates(children: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """A teammate <-> the lead's Agent call that named it (agent teams): the call's ``name`` is
    the teammate's meta.json name (agentType in 2.1.8x), in the same session tree and, when the
    teammate's records name their team, the call's ``team_name``. Verified when the call's result
    (``teammate_spawned``) names the same ``<name>@<team>``; heuristic on the name alone. Of
    several such calls, the latest one started before the teammate; every file of one teammate
    (Claude may write two that start together) is a child of that one call."""
    kids = children.filter((pl.col("harness") == "claude-code") & pl.col("agent_name").is_not_null()).select(
        pl.col("session_id").alias("dst"),
        "native_id",
        "agent_name",
        "team_name",
        pl.col("started_at").alias("kid_start"),
    )
    c = calls.filter((pl.col("harness") == "claude-code") & pl.col("agent_name").is_not_null()).select(
        pl.col("session_id").alias("src"),
        "native_id",
        pl.col("call_id").alias("src_call_id"),
        "agent_name",
        pl.col("team_name").alias("call_team"),
        "result_agent_id",
        "started_at",
    )
    said = pl.col("result_agent_id") == pl.col("agent_name") + pl.lit("@") + pl.col("call_team")
    return (
        kids.join(c, on=["native_id", "agent_name"], how="inner")
        .filter(
            (pl.col("team_name").is_null() | (pl.col("team_name") == pl.col("call_team")))
            & (pl.col("started_at") <= pl.col("kid_start")).fill_null(True)
        )
        .with_columns(
            tier=pl.when(said.fill_null(False)).then(pl.lit("verified")).otherwise(pl.lit("heuristic")),
            evidence=pl.when(said.fill_null(False))
            .then(pl.lit("Agent name/team_name = teammate_spawned agent_id = meta.json agentType"))
            .otherwise(pl.lit("Agent name = meta.json agentType")),
        )
        .sort("dst", rank("tier"), "started_at", "src_call_id", descending=[False, False, True, False], nulls_last=True)
        .unique("dst", keep="first", maintain_order=True)
        .select(_CAND)
    )


def _claude_workflow_agents(children: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """A workflow agent whose run left no journal <-> the lead's Workflow call whose result
    names the run (runId = the wf_<runId> folder the agent lies in). With a journal, the agent
    is the run's (``_claude_by_call``, ``_claude_by_layout``), the run the call's."""
    kids = children.filter((pl.col("harness") == "claude-code") & (pl.col("layout") == "workflow"))
    journals = children.filter(pl.col("layout") == "journal").select(
        "native_id", pl.col("agent_id").alias("parent_agent_id")
    )
    kids = kids.join(journals, on=["native_id", "parent_agent_id"], how="anti").select(
        pl.col("session_id").alias("dst"), "native_id", "parent_agent_id"
    )
    c = calls.filter((pl.col("harness") == "claude-code") & (pl.col("tool") == "Workflow")).select(
        pl.col("session_id").alias("src"), "native_id", pl.col("call_id").alias("src_call_id"), "result_agent_id"
    )
    return kids.join(
        c, left_on=["native_id", "parent_agent_id"], right_on=["native_id", "result_agent_id"], how="inner"
    ).select(
        "dst",
        "src",
        "src_call_id",
        pl.lit("verified").alias("tier"),
        pl.lit("workflows/wf_<runId> folder = Workflow toolUseResult.runId").alias("evidence"),
    )


def _claude_by_layout(children: pl.DataFrame, ns: pl.DataFrame) -> pl.DataFrame:
    """No call names the child: its declared parent agent (reported), its folder or, for an
    inline sidechain, the transcript it shares with its parent (heuristic). A workflow agent's
    folder is its run's (the run's journal session, else the session the run is in)."""
    kids = children.filter(pl.col("harness") == "claude-code")
    known = ns.select(pl.col("session_id").alias("src"))
    run = pl.lit("claude-code:") + pl.col("native_id") + pl.lit("/") + pl.col("parent_agent_id")
    workflow = kids.filter(pl.col("layout") == "workflow").with_columns(run.alias("run"))
    workflow = workflow.with_columns(
        in_run=pl.col("run").is_in(known["src"].implode()).fill_null(False),
    ).select(
        pl.col("session_id").alias("dst"),
        pl.when(pl.col("in_run"))
        .then(pl.col("run"))
        .otherwise(pl.lit("claude-code:") + pl.col("native_id"))
        .alias("src"),
        pl.lit(None, pl.String).alias("src_call_id"),
        pl.lit("heuristic").alias("tier"),
        pl.when(pl.col("in_run"))
        .then(pl.lit("directory layout (workflows/") + pl.col("parent_agent_id") + pl.lit(")"))
        .otherwise(pl.lit("directory layout (workflow)"))
        .alias("evidence"),
    )
    kids = kids.filter(pl.col("layout") != "workflow")
    declared = kids.filter(pl.col("parent_agent_id").is_not_null()).select(
        pl.col("session_id").alias("dst"),
        run.alias("src"),
        pl.lit(None, pl.String).alias("src_call_id"),
        pl.lit("reported").alias("tier"),
        pl.lit("meta.json parentAgentId").alias("evidence"),
    )
    layout = kids.filter(pl.col("parent_agent_id").is_null()).select(
        pl.col("session_id").alias("dst"),
        (pl.lit("claude-code:") + pl.col("native_id")).alias("src"),
        pl.lit(None, pl.String).alias("src_call_id"),
        pl.lit("heuristic").alias("tier"),
        pl.when(pl.col("layout") == "inline")
        .then(pl.lit("shared transcript (inline sidechain)"))
        .otherwise(pl.lit("directory layout (") + pl.col("layout") + pl.lit(")"))
        .alias("evidence"),
    )
    return pl.concat([declared, layout, workflow]).join(known, on="src", how="semi")


# Evidence wording per harness for "the child records its parent" (+ "the call names the child").
RECORDED_PARENT = {
    "codex": ("thread_spawn.parent_thread_id", "spawn_agent result names the child"),
    "omp": ("task folder <root stem>/<id>.jsonl", "task result names the agent id"),
    "gemini-cli": ("chat folder chats/<parent sessionId>/", "spawn call names the child"),
    "qwen-code": ("parent_session record", "spawn call names the child"),
    "cursor": ("folder <parent uuid>/subagents/", "spawn call names the child"),
    "kimi-code": ("state.json parentAgentId", "Agent result names the agent id"),
    "kimi-cli": ("SubagentEvent task_tool_call_id", "Task call id"),
    "copilot-cli": ("subagent.started toolCallId", "task call id"),
    "crush": ("sessions.parent_session_id", "child id <message>$$<agent call>"),
    "factory-droid": ("session_start.callingSessionId", "callingToolUseId"),
}
# Harnesses whose child records the parent's call id too (its parent_tool_use_id).
CALLING_CALL = {"factory-droid": "session_start.callingSessionId + callingToolUseId"}
# Harnesses whose child "records" its parent only by where its file lies: without a call that
# names it, that is layout evidence (heuristic), not a recorded id.
LAYOUT_ONLY = ("omp", "gemini-cli", "cursor")
# Harnesses whose spawn results name no child id: the call is the parent's spawn call that was
# running when the child started (heuristic).
BY_WINDOW = ("gemini-cli",)


def _recorded_parent(children: pl.DataFrame, ns: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """Every harness but Claude: the child's log names its parent session (Codex
    ``parent_thread_id``, opencode ``parentID``, Prickle ``parent_task_id``, oh-my-pi's task
    folder), so ``<harness>:<parent_native_id>`` is the parent; a spawn call in the parent whose
    result names the child (by native or agent id) is the call."""
    kids = children.filter((pl.col("harness") != "claude-code") & pl.col("parent_native_id").is_not_null()).select(
        pl.col("session_id").alias("dst"),
        "harness",
        pl.coalesce("agent_id", "native_id").alias("child_key"),
        "native_id",
        (pl.col("harness") + pl.lit(":") + pl.col("parent_native_id")).alias("src"),
    )
    kids = kids.join(ns.select(pl.col("session_id").alias("src")), on="src", how="semi")
    c = calls.filter(pl.col("result_agent_id").is_not_null()).select(
        pl.col("session_id").alias("src"), pl.col("call_id").alias("src_call_id"), "result_agent_id"
    )
    by_key = kids.join(c, left_on=["src", "child_key"], right_on=["src", "result_agent_id"], how="left")
    by_native = kids.join(c, left_on=["src", "native_id"], right_on=["src", "result_agent_id"], how="left")
    named = (
        by_key.join(by_native.select("dst", pl.col("src_call_id").alias("alt")), on="dst", how="left")
        .with_columns(src_call_id=pl.coalesce("src_call_id", "alt"))
        .unique("dst", keep="first", maintain_order=True)
    )
    child_says = pl.col("harness").replace_strict(
        {h: w[0] for h, w in RECORDED_PARENT.items()}, default="parent id recorded by the child"
    )
    call_says = pl.col("harness").replace_strict(
        {h: w[1] for h, w in RECORDED_PARENT.items()}, default="spawn call names the child"
    )
    layout_only = pl.col("harness").is_in(LAYOUT_ONLY) & pl.col("src_call_id").is_null()
    return named.select(
        "dst",
        "src",
        "src_call_id",
        pl.when(layout_only).then(pl.lit("heuristic")).otherwise(pl.lit("verified")).alias("tier"),
        pl.when(pl.col("src_call_id").is_not_null())
        .then(child_says + pl.lit(" + ") + call_says)
        .otherwise(child_says)
        .alias("evidence"),
    )


# Harnesses whose child does not record its parent, but whose spawn calls name the child's session
# id: harness -> (the harnesses that session may be logged by, the evidence of each call column).
NAMED_BY_CALL = {
    "oh-my-opencode": (
        ("oh-my-opencode", "opencode"),
        {
            "result_agent_id": "spawn result tool_output.sessionId / task_metadata session_id / Session ID",
            "progress_agent_id": "background task id -> background_output sessionId",
        },
    ),
}


def _named_by_call(ns: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """An oh-my-opencode transcript's spawn result names the child opencode session (``ses_``
    id), or its background launch's task id is named by a later report that names the session:
    the child is that session's transcript or its opencode session, whichever is read."""
    rows = []
    for harness, (logged_by, routes) in NAMED_BY_CALL.items():
        kids = ns.filter(pl.col("harness").is_in(logged_by)).select(pl.col("session_id").alias("dst"), "native_id")
        for col, evidence in routes.items():
            c = calls.filter((pl.col("harness") == harness) & pl.col(col).is_not_null()).select(
                pl.col("session_id").alias("src"), pl.col("call_id").alias("src_call_id"), pl.col(col).alias("named")
            )
            rows.append(
                c.join(kids, left_on="named", right_on="native_id", how="inner").select(
                    "dst", "src", "src_call_id", pl.lit("verified").alias("tier"), pl.lit(evidence).alias("evidence")
                )
            )
    return pl.concat(rows) if rows else pl.DataFrame(schema={k: pl.String for k in _CAND})


def _by_calling_call(children: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """A Droid child's session_start names its parent session and the parent's Task call."""
    kids = children.filter(
        pl.col("harness").is_in(list(CALLING_CALL))
        & pl.col("parent_native_id").is_not_null()
        & pl.col("parent_tool_use_id").is_not_null()
    ).select(
        pl.col("session_id").alias("dst"),
        "harness",
        (pl.col("harness") + pl.lit(":") + pl.col("parent_native_id")).alias("src"),
        pl.col("parent_tool_use_id").alias("src_call_id"),
    )
    c = calls.select(pl.col("session_id").alias("src"), pl.col("call_id").alias("src_call_id"))
    return kids.join(c, on=["src", "src_call_id"], how="inner").select(
        "dst",
        "src",
        "src_call_id",
        pl.lit("verified").alias("tier"),
        pl.col("harness").replace_strict(CALLING_CALL, default="calling call id").alias("evidence"),
    )


def _call_running(children: pl.DataFrame, calls: pl.DataFrame) -> pl.DataFrame:
    """A Gemini sub-agent's chat lies in its parent's chat folder, and the parent's spawn call
    that ran it was open when it started (the latest started one, when several were)."""
    kids = children.filter(pl.col("harness").is_in(BY_WINDOW) & pl.col("parent_native_id").is_not_null()).select(
        pl.col("session_id").alias("dst"),
        (pl.col("harness") + pl.lit(":") + pl.col("parent_native_id")).alias("src"),
        pl.col("started_at").alias("child_start"),
    )
    c = calls.select(
        pl.col("session_id").alias("src"), pl.col("call_id").alias("src_call_id"), "started_at", "ended_at"
    )
    return (
        kids.join(c, on="src", how="inner")
        .filter(
            (pl.col("started_at") <= pl.col("child_start"))
            & (pl.col("child_start") <= pl.col("ended_at").fill_null(pl.col("child_start")))
        )
        .sort("dst", "started_at", descending=[False, True])
        .unique("dst", keep="first", maintain_order=True)
        .select(
            "dst",
            "src",
            "src_call_id",
            pl.lit("heuristic").alias("tier"),
            pl.lit("chat folder + spawn call running when the child started").alias("evidence"),
        )
    )


def _best(cands: pl.DataFrame) -> pl.DataFrame:
    """One parent per child: the strongest route; its call and every route that agrees with it."""
    # A session never spawns itself: a transcript that holds its parent's records (a copy put in
    # its place) names its own agent id in the parent's call.
    cands = cands.filter(pl.col("src") != pl.col("dst"))
    if cands.height == 0:
        return cands
    # Ties (two sessions holding the same call) go the same way whatever the rows' order, so an
    # incremental ingest infers what a cold one does.
    ranked = cands.with_columns(r=rank("tier")).sort(
        "dst", "r", pl.col("src_call_id").is_null(), "evidence", "src", "src_call_id", nulls_last=True
    )
    top = ranked.group_by("dst", maintain_order=True).first().select("dst", "src", "src_call_id", "tier")
    # Evidence of every route naming the same parent (and the same call, or none) is kept.
    # (Joined keeping the ranked order, so the evidence reads the same on every run.)
    agree = ranked.join(top.select("dst", pl.col("src").alias("top_src")), on="dst", maintain_order="left").filter(
        pl.col("src") == pl.col("top_src")
    )
    evidence = agree.group_by("dst", maintain_order=True).agg(
        pl.col("evidence").unique(maintain_order=True).str.join(" + ")
    )
    return top.join(evidence, on="dst")
