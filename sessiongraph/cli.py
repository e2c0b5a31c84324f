"""The ``sessiongraph`` command: thin click wrappers over the library functions of the same name
(``sessiongraph.show`` for ``show``, ``sessiongraph.export_ocp`` for ``export ocp``; ``ingest`` is
``sessiongraph.ingest_logs``: the package docstring says why).

The library modules are imported by the commands that use them: polars and DuckDB take longer to
import than ``--help`` or a bad argument takes to answer.
"""

from __future__ import annotations

import functools
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import click

import sessiongraph
from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest.frames import PROFILES
from sessiongraph.ingest.steps import DEFAULT_MAX_TEXT_CHARS
from sessiongraph.version import __version__

if TYPE_CHECKING:
    from sessiongraph.pipeline import IngestSummary

PRICES_OPTION = click.option(
    "--prices",
    type=click.Path(dir_okay=False, exists=True),
    help="A CSV of prices that win over genai-prices for the models it names; the store remembers it (README, Dollars).",
)
DB_OPTION = click.option(
    "--db",
    type=click.Path(dir_okay=False),
    envvar="SESSIONGRAPH_DB",
    help="DuckDB store file (default: sessiongraph.duckdb in the user data dir; env SESSIONGRAPH_DB).",
)


def json_option(help: str = "Print one JSON object with what was written."):
    """``--json``: the command prints JSON (``help`` says what) instead of text."""
    return click.option("--json", "as_json", is_flag=True, help=help)


def privacy_option(help: str):
    """``--privacy``: one of the profiles (``ingest.frames.PROFILES``), metadata_only by default."""
    return click.option("--privacy", type=click.Choice(PROFILES), default="metadata_only", show_default=True, help=help)


def _errors(fn):
    """Turn library errors into `Error: ...` and exit 1, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except SessiongraphError as exc:
            from sessiongraph.views.output import printable

            raise click.ClickException(printable(str(exc))) from None
        except Exception as exc:
            # A full disk or an I/O error outside the store (which raises its own message, see
            # Store.__exit__), e.g. writing an export: the OS's reason and the file, in one line.
            # (duckdb is not imported here: --help must stay quick.)
            from sessiongraph.store.connection import first_line, io_failure
            from sessiongraph.views.output import printable

            if (why := io_failure(exc)) is None:
                raise
            target = (exc.filename if isinstance(exc, OSError) else None) or kwargs.get("out")
            what = f"cannot write {target}: {why}" if target else f"{why}: {first_line(exc)}"
            raise click.ClickException(printable(what)) from None

    return wrapper


def _warn_prices(db) -> None:
    """Say so on stderr when the store's dollars are older than the installed price library."""
    from sessiongraph.views.queries import price_warning

    if warning := price_warning(db=db):
        click.echo(f"Warning: {warning}", err=True)


def _echo(text: str) -> None:
    """Print to the terminal: values from logs are untrusted, so no escape code reaches it."""
    from sessiongraph.views.output import printable

    click.echo(printable(text))


class Date(click.ParamType):
    """A date or date-time (ISO 8601); naive values are taken as UTC."""

    name = "date"

    def convert(self, value, param, ctx):
        if isinstance(value, datetime):
            return value
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            self.fail(f"{value!r} is not a date; use YYYY-MM-DD or YYYY-MM-DDTHH:MM", param, ctx)
        return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _read_options(fn):
    """What says how logs are read into the store (``ingest``, ``watch``): privacy, text cut, launchers."""
    for option in reversed(
        [
            privacy_option(
                "metadata_only stores no log text; full keeps shell commands, subagent descriptions and step text "
                "(prompts, completions, tool input and output), secrets masked."
            ),
            click.option(
                "--max-text-chars",
                type=click.IntRange(min=0),
                default=DEFAULT_MAX_TEXT_CHARS,
                show_default=True,
                help="With --privacy full: keep at most this many characters of each step's text "
                "(texts.cut_chars counts the rest).",
            ),
            click.option(
                "--launcher",
                "launchers",
                multiple=True,
                metavar="NAME=HARNESS",
                help="A wrapper CLI that runs an agent CLI (e.g. omx=codex); repeatable. Also [launchers] in the "
                "config file ($SESSIONGRAPH_CONFIG, default ~/.config/sessiongraph/config.toml).",
            ),
        ]
    ):
        fn = option(fn)
    return fn


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sessiongraph")
def main() -> None:
    """Turn coding-agent session logs into a queryable DuckDB store.

    Reads Claude Code (~/.claude) and Codex CLI (~/.codex) transcripts by default.
    """


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@DB_OPTION
@click.option("--since", type=Date(), help="Only files with a session active on or after this date.")
@click.option("--until", type=Date(), help="Only files with a session that started by this date.")
@click.option("--workers", type=click.IntRange(min=1), help="Parser processes (default: all cores).")
@json_option("Print one JSON object with the counts instead.")
@click.option(
    "--engine",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where files are parsed and the passes run: this machine's cores, or a Ray cluster (pip install 'sessiongraph[ray]').",
)
@click.option("--ray-address", help="Ray cluster to use with --engine ray (default: $RAY_ADDRESS, else a local Ray).")
@click.option("--out-parquet", help="Then write the Parquet dataset here (a folder or a URI such as s3://bucket/path).")
@_read_options
@click.option(
    "--prune", is_flag=True, help="Drop stored files under PATHS that are gone from disk (default: keep them)."
)
@click.option(
    "--git",
    is_flag=True,
    help="Then read the git repositories the sessions worked in (their cwd, on this machine): commits whose "
    "changed files match a session's writes (heuristic commits rows) and whether each commit row is still in "
    "its branch (in_branch). Hashes, branches and times only, never messages or authors. Off by default.",
)
@PRICES_OPTION
@_errors
def ingest(
    paths,
    db,
    since,
    until,
    workers,
    as_json,
    engine,
    ray_address,
    out_parquet,
    privacy,
    launchers,
    prune,
    max_text_chars,
    prices,
    git,
):
    """Read session logs under PATHS (default: the harnesses' own folders) into the store.

    Harnesses read (default folders): Claude Code (~/.claude, $CLAUDE_CONFIG_DIR), Codex CLI
    (~/.codex, $CODEX_HOME), pi (~/.pi), oh-my-pi (~/.omp), Gemini CLI (~/.gemini/tmp), Qwen Code
    (~/.qwen/projects), Cursor (~/.cursor/projects), Kimi Code (~/.kimi-code/sessions), Kimi CLI
    (~/.kimi/sessions, $KIMI_SHARE_DIR), GitHub Copilot CLI (~/.copilot/session-state and
    history-session-state, $COPILOT_HOME), opencode (~/.local/share/opencode), oh-my-opencode
    transcripts (~/.claude/transcripts), Crush
    (.crush/crush.db, ~/.crush), Factory Droid (~/.factory/sessions,
    $FACTORY_DIR), Prickle task records and OCP documents.

    Files unchanged since the last ingest (and stored under the same --privacy) are not read
    again; a changed file's rows are replaced in one transaction, and the passes run again
    only over the partitions the changed files reach.
    """
    from sessiongraph import config
    from sessiongraph.views.output import dumps

    run_ingest = sessiongraph.ingest_logs

    options = dict(
        db=db,
        since=since,
        until=until,
        workers=workers,
        engine=engine,
        ray_address=ray_address,
        privacy=privacy,
        launchers=config.launchers(launchers),
        max_text_chars=max_text_chars,
        prune=prune,
        prices=prices,
        git=git,
    )
    if not as_json and sys.stderr.isatty():
        from rich.progress import Progress

        with Progress(transient=True) as bar:
            task = bar.add_task("parsing", total=None)
            summary = run_ingest(
                paths, **options, progress=lambda done, total: bar.update(task, completed=done, total=total)
            )
    else:
        summary = run_ingest(paths, **options)
    written = None
    if out_parquet:
        written = sessiongraph.export_parquet(out_parquet, db=summary.db)
    if as_json:
        _echo(dumps({**summary.to_dict(), **({"dataset": written.to_dict()} if written else {})}))
        return
    _echo(_summary_text(summary))
    if written:
        _echo(_parquet_text(written))


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@DB_OPTION
@click.option("--workers", type=click.IntRange(min=1), help="Parser processes (default: all cores).")
@json_option("Print one JSON object a line per event (watching, ingest, busy, stopped) instead.")
@_read_options
@PRICES_OPTION
@_errors
def watch(paths, db, workers, as_json, privacy, launchers, max_text_chars, prices):
    """Keep the store up to date with the logs under PATHS (default: the harnesses' own folders).

    First an ingest as `ingest --prune` does, then each change within a second: a written or
    grown file is read (from where it was), a file or folder renamed or deleted has its rows
    dropped, a root that does not exist yet is waited for. Only the changed paths are looked at.
    The store is closed between ingests: queries and exports run meanwhile. Ctrl-C stops it
    (an ingest under way rolls back its batch) with a summary.
    """
    from sessiongraph import config
    from sessiongraph.views.output import dumps

    def report(event: dict) -> None:
        if as_json:
            _echo(dumps(event))
        elif event["event"] == "ingest":
            _echo(_watch_line(event))
        elif event["event"] == "watching":
            waiting = f"; waiting for {', '.join(event['waiting_for'])}" if event["waiting_for"] else ""
            _echo(f"Watching {', '.join(event['roots']) or 'nothing yet'}{waiting} (Ctrl-C stops)")
        elif event["event"] == "busy":
            _echo(f"Store busy, trying again: {event['message']}")
        elif event["event"] == "stopped":
            _echo(
                f"Stopped after {event['seconds']:.0f}s: {event['ingests']} ingests, {event['files_read']} files "
                f"read, {event['files_removed']} dropped. Store: {event['db']}"
            )

    sessiongraph.watch(
        paths,
        db=db,
        workers=workers,
        privacy=privacy,
        launchers=config.launchers(launchers),
        max_text_chars=max_text_chars,
        prices=prices,
        report=report,
    )


def _watch_line(e: dict) -> str:
    when = datetime.now().strftime("%H:%M:%S")
    what = "everything" if e["changed"] is None else f"{e['changed']} changed paths"
    shown = ""
    if e["paths"]:
        shown = ": " + ", ".join(e["paths"][:3]) + (f" and {e['changed'] - 3} more" if e["changed"] > 3 else "")
    return (
        f"{when} {what}: {e['files_read']} read"
        + (f" ({e['files_resumed']} grown)" if e["files_resumed"] else "")
        + f", {e['files_removed']} dropped, {e['partitions_inferred']} partitions inferred in {e['seconds']:.2f}s"
        + shown
    )


def _summary_text(s: IngestSummary) -> str:
    if s.files_found == 0:
        return f"No logs found. Looked in: {', '.join(s.roots)}\nStore: {s.db}"
    edges = "; ".join(
        f"{kind} " + ", ".join(f"{n} {tier}" for tier, n in tiers.items()) for kind, tiers in s.edges_by_kind.items()
    )
    lines = [
        f"Files: {s.files_found} found, {s.files_read} read"
        + (f" ({s.files_resumed} grown, read from where the last ingest stopped)" if s.files_resumed else "")
        + f", {s.files_unchanged} unchanged, {s.files_skipped} skipped"
        + (f", {s.files_removed} gone and dropped" if s.files_removed else "")
        + _counts(s.skipped_by_reason),
        "Sessions read: " + (_counts(s.sessions_by_harness, bare=True) or "none"),
        "Diagnostics: " + (_counts(s.diagnostics_by_code, bare=True) or "none"),
        "Store now holds: " + (_counts(s.store_sessions_by_harness, bare=True) or "no sessions") + f"; {s.runs} runs",
        "Edges: " + (edges or "none"),
        "Inference: "
        + (_counts(s.inference_counts, bare=True) or "nothing to report")
        + (
            f" (passes re-run over {s.partitions_inferred} partitions, {s.files_inferred} files)"
            if s.inferred
            else " (nothing changed: passes not run)"
        ),
        _prices_text(s.prices),
        *([_git_text(s.git)] if s.git else []),
        f"Store: {s.db} ({s.privacy}, {s.seconds:.2f}s)",
    ]
    return "\n".join(lines)


def _git_text(g: dict) -> str:
    checked = ", ".join(f"{n} {k}" for k, n in g["in_branch"].items())
    text = (
        f"Git: {g['repositories']} repositories read ({g['sessions']} sessions); heuristic commits: "
        + (_counts(g["heuristic"], bare=True) or "none")
        + (f"; in_branch: {checked}" if checked else "")
        + (f"; problems: {_counts(g['problems'], bare=True)}" if g["problems"] else "")
    )
    return "\n".join([text, *(f"  {m}" for m in g["messages"])])


def _prices_text(p: dict) -> str:
    if not p:
        return "Dollars: no requests"
    if not p["rows_priced"]:
        return f"Dollars: every request priced already ({p['priced_with']})"
    return f"Dollars: {p['rows_priced']:,} requests priced, {p['rows_changed']:,} changed ({p['priced_with']})"


@main.command()
@DB_OPTION
@PRICES_OPTION
@click.option("--no-prices", is_flag=True, help="Forget the store's --prices file: price with genai-prices alone.")
@click.option("--all", "force", is_flag=True, help="Price every request again, not only those priced otherwise.")
@json_option("Print one JSON object with what was priced.")
@_errors
def reprice(db, prices, no_prices, force, as_json):
    """Price the store's requests again: after upgrading genai-prices, or with another --prices file.

    Rows priced with the current price set (genai-prices version, price file and its content) are
    left alone unless --all; an ingest does the same for what it finds priced otherwise.
    """
    from sessiongraph.views.output import dumps

    if prices and no_prices:
        raise click.UsageError("give --prices or --no-prices, not both")
    done = sessiongraph.reprice(db=db, prices=prices, drop_file=no_prices, force=force)
    _echo(dumps(done.to_dict()) if as_json else _prices_text(done.to_dict()))


def _counts(counts: dict[str, int], bare: bool = False) -> str:
    text = ", ".join(f"{k} {v}" for k, v in counts.items())
    return text if bare or not text else f" ({text})"


class _SchemaHelp(click.Command):
    """A command whose help names what the store and the dataset hold, read when help is shown."""

    def format_help_text(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        from sessiongraph.dataset.tables import TABLES
        from sessiongraph.sql import names

        held = names()
        self.help = (self.help or "").format(
            tables=", ".join(held["tables"]),
            views=", ".join(held["views"]),
            macros=", ".join(held["macros"]),
            dataset=", ".join(TABLES),
        )
        super().format_help_text(ctx, formatter)


@main.command(cls=_SchemaHelp)
@click.argument("sql", required=False)
@click.option("-f", "--file", "sql_file", type=click.File("r"), help="Read the SQL from a file (- for stdin).")
@DB_OPTION
@click.option(
    "--format", "fmt", type=click.Choice(["table", "csv", "json", "jsonl"]), default="table", show_default=True
)
@click.option(
    "--parquet", metavar="DIR", help="Query a Parquet dataset (export parquet) instead of a store; not with --db."
)
@_errors
def query(sql, sql_file, db, fmt, parquet):
    """Run SQL against the store, opened read-only.

    Tables: {tables}.

    Views: {views}. Dollar macros: {macros} (README, Dollars). Example questions live in
    sql/queries/.

    With --parquet DIR: one view per dataset table ({dataset}), each with its harness and month
    partition columns (DATASET.md).
    """
    if (sql is None) == (sql_file is None):
        raise click.UsageError("give the SQL as an argument or with --file, not both")
    from sessiongraph.views.output import render

    text = sql if sql is not None else sql_file.read()
    if parquet:
        if db and click.get_current_context().get_parameter_source("db") == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError("give --db or --parquet, not both")
        from sessiongraph.dataset.parquet import query as query_parquet

        _echo(render(query_parquet(text, parquet=parquet), fmt))
        return
    _warn_prices(db)
    _echo(render(sessiongraph.query(text, db=db), fmt))


def _listing_options(fn):
    """The filters, sort and formats `sessions` and `runs` share."""
    for option in reversed(
        [
            DB_OPTION,
            click.option("--since", type=Date(), help="Only those active on or after this date."),
            click.option("--until", type=Date(), help="Only those that started by this date."),
            click.option(
                "--harness", "harnesses", multiple=True, help="Only this harness (a run's: its root's); repeatable."
            ),
            click.option(
                "--cwd", help="Only this project: a cwd at or under this path (a bare name: any cwd containing it)."
            ),
            click.option(
                "--sort",
                type=click.Choice(["start", "cost", "tokens", "sessions"]),
                default="start",
                show_default=True,
                help="Order: by start; by dollars, tokens or sessions (subagents of a session), most first.",
            ),
            click.option("--limit", type=click.IntRange(min=0), help="At most this many rows."),
            click.option(
                "--format",
                "fmt",
                type=click.Choice(["table", "csv", "json", "jsonl"]),
                default="table",
                show_default=True,
                help="Machine formats never cut an id.",
            ),
            json_option("Same as --format json."),
            click.option("--wide", is_flag=True, help="Cut no cell of the table (ids are never cut)."),
        ]
    ):
        fn = option(fn)
    return fn


def _listing(kind: str, db, fmt, as_json, wide, **filters) -> None:
    from sessiongraph.views.output import render

    _warn_prices(db)
    df = getattr(sessiongraph, kind)(db=db, **filters)
    _echo(render(df, "json" if as_json else fmt, wide=wide))


@main.command()
@_listing_options
@click.option(
    "--status",
    multiple=True,
    type=click.Choice(["completed", "error", "interrupted", "unknown"]),
    help="Only sessions whose log ends so (sessions.end_status); repeatable.",
)
@_errors
def sessions(db, since, until, harnesses, cwd, sort, limit, fmt, as_json, wide, status):
    """One line per session: harness, kind, how its log ends (status), start and end, model, cwd,
    subagents spawned, tokens, dollars and run."""
    _listing(
        "sessions",
        db,
        fmt,
        as_json,
        wide,
        since=since,
        until=until,
        harnesses=harnesses,
        cwd=cwd,
        sort=sort,
        limit=limit,
        status=status,
    )


@main.command()
@_listing_options
@_errors
def runs(db, since, until, harnesses, cwd, sort, limit, fmt, as_json, wide):
    """One line per run: root harness, start and end, sessions, subagents, launched sessions, the
    root's cwd, tokens, dollars and harnesses."""
    _listing(
        "runs", db, fmt, as_json, wide, since=since, until=until, harnesses=harnesses, cwd=cwd, sort=sort, limit=limit
    )


@main.command()
@click.argument("run")
@DB_OPTION
@click.option("--format", "fmt", type=click.Choice(["tree", "dot", "html"]), default="tree", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, writable=True), help="Write to this file instead of stdout.")
@_errors
def show(run, db, fmt, out):
    """Show RUN (a run id, any of its session ids, or a unique prefix) as a tree of sessions
    nested by spawn and launch, every edge with its tier; or as Graphviz DOT; or as one
    self-contained HTML page (swimlane timeline, sortable tables, details on click)."""
    _warn_prices(db)
    text = sessiongraph.show(run, fmt=fmt, db=db)
    if out:
        from sessiongraph.views.html import save

        save(out, text.rstrip("\n") + "\n")
    else:
        _echo(text.rstrip("\n"))


@main.command()
@DB_OPTION
@click.option("--since", type=Date(), help="Only runs active on or after this date.")
@click.option("--format", "fmt", type=click.Choice(["text", "html"]), default="text", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), help="Write to this file instead of stdout.")
@_errors
def report(db, since, fmt, out):
    """The history at a glance: runs and dollars per day by harness and model, the most expensive
    runs, subagent and launch counts, the tier mix of all edges and the diagnostics counts.

    With --format html --out FILE, the pages of the most expensive runs go beside FILE in runs/,
    and the report links to them."""
    _warn_prices(db)
    text = sessiongraph.report(since=since, fmt=fmt, db=db)
    if out:
        from pathlib import Path

        from sessiongraph.views.html import save

        save(out, text.rstrip("\n") + "\n")
        if fmt == "html":  # the run pages its run ids link to, beside it
            from sessiongraph.views.queries import report_pages

            for name, page in report_pages(since=since, db=db).items():
                (Path(out).parent / name).parent.mkdir(parents=True, exist_ok=True)
                save(Path(out).parent / name, page)
    else:
        _echo(text.rstrip("\n"))


@main.group()
def export():
    """Write runs out: OCP 0.3 documents (one per run), OpenTelemetry traces (one per run), a Parquet
    dataset, or training trajectories."""


def _run_filters(fn):
    """The runs an export covers (Store.chosen_runs): `export ocp` and `export otlp` share them."""
    for option in reversed(
        [
            click.option(
                "--run", "runs", multiple=True, help="Only this run (a run id, a session id or a prefix); repeatable."
            ),
            click.option("--since", type=Date(), help="Only runs active on or after this date."),
            click.option("--until", type=Date(), help="Only runs that started by this date."),
            click.option(
                "--harness", "harnesses", multiple=True, help="Only runs whose root is of this harness; repeatable."
            ),
        ]
    ):
        fn = option(fn)
    return fn


@export.command("ocp")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for the <run>.ocp.json files.")
@_run_filters
@privacy_option("metadata_only writes no prompt, completion, tool or file text.")
@DB_OPTION
@json_option()
@_errors
def export_ocp(out, runs, since, until, harnesses, privacy, db, as_json):
    """Write one OCP 0.3 document per run into --out."""
    from sessiongraph.views.output import dumps

    _warn_prices(db)
    summary = sessiongraph.export_ocp(
        out, db=db, runs=runs, since=since, until=until, harnesses=harnesses, privacy=privacy
    )
    if as_json:
        _echo(dumps(summary.to_dict()))
        return
    _echo(f"Wrote {summary.documents} OCP documents to {summary.out}")
    if summary.unpriced_models:
        _echo(
            "No price for: "
            + ", ".join(f"{m} ({n})" for m, n in summary.unpriced_models.items())
            + " (usd left out of those attempts)"
        )


@export.command("otlp")
@click.option("--out", type=click.Path(file_okay=False), help="Folder for the <run>.otlp.json files (OTLP/JSON).")
@click.option(
    "--endpoint",
    help="Send over OTLP/HTTP to this URL (a bare http://host:port gets /v1/traces); headers and timeout from "
    "OTEL_EXPORTER_OTLP_[TRACES_]HEADERS and _TIMEOUT.",
)
@_run_filters
@privacy_option("metadata_only puts no prompt, tool input or output, or command in any attribute.")
@DB_OPTION
@json_option()
@_errors
def export_otlp(out, endpoint, runs, since, until, harnesses, privacy, db, as_json):
    """Write or send each run as one OpenTelemetry trace: its sessions as invoke_agent spans nested by
    verified spawn and launch edges (weaker ones are links), tool calls as execute_tool spans, tokens
    and dollars on the sessions that spent them, artifact flows as links. Give --out, --endpoint or both."""
    from sessiongraph.views.output import dumps

    if not out and not endpoint:
        raise click.UsageError("give --out DIR, --endpoint URL or both")
    _warn_prices(db)
    s = sessiongraph.export_otlp(
        out, endpoint=endpoint, db=db, runs=runs, since=since, until=until, harnesses=harnesses, privacy=privacy
    )
    if as_json:
        _echo(dumps(s.to_dict()))
        return
    where = " and ".join(
        w for w in (s.out and f"wrote {len(s.files)} files to {s.out}", s.endpoint and f"sent to {s.endpoint}") if w
    )
    _echo(f"OTLP: {s.runs} runs as traces, {s.spans} spans, {s.links} links; {where}")


@export.command("parquet")
@click.option("--out", required=True, help="Dataset folder, or a URI such as s3://bucket/path.")
@privacy_option("metadata_only writes no log text (no shell commands or subagent descriptions).")
@DB_OPTION
@json_option()
@_errors
def export_parquet(out, privacy, db, as_json):
    """Write the store as a Hive-partitioned Parquet dataset (OUT/<table>/harness=/month=/).

    Exporting again rewrites only the partitions whose rows changed. Columns: DATASET.md.
    """
    from sessiongraph.views.output import dumps

    _warn_prices(db)
    summary = sessiongraph.export_parquet(out, db=db, privacy=privacy)
    _echo(dumps(summary.to_dict()) if as_json else _parquet_text(summary))


@export.command("trajectories")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="Folder for the split files.")
@click.option(
    "--split",
    default="train=0.9,validation=0.05,test=0.05",
    show_default=True,
    help="Split names and fractions; every session of a run lands in the same split.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the run -> split assignment.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["parquet", "jsonl"]),
    default="parquet",
    show_default=True,
    help="File format.",
)
@click.option("--since", type=Date(), help="Only sessions active on or after this date.")
@click.option("--until", type=Date(), help="Only sessions that started by this date.")
@click.option("--harness", "harnesses", multiple=True, help="Only sessions of this harness; repeatable.")
@click.option("--min-steps", type=click.IntRange(min=0), default=0, help="Only sessions with at least this many steps.")
@click.option(
    "--by",
    type=click.Choice(["session", "run"]),
    default="session",
    show_default=True,
    help="A row per session, or per run (its conversations linked at the calls that started them).",
)
@DB_OPTION
@json_option()
@_errors
def export_trajectories(out, split, seed, fmt, since, until, harnesses, min_steps, by, db, as_json):
    """Write each session's conversation (messages with tool calls) and labels as training splits.

    Needs a store ingested with --privacy full (the text is the point); OUT/<split>.parquet or
    .jsonl loads with polars or `datasets`. With --by run a row is a run: its sessions'
    conversations, each once, linked at the spawning or launching calls. Columns: DATASET.md.
    """
    from sessiongraph.views.output import dumps

    s = sessiongraph.export_trajectories(
        out,
        db=db,
        split=split,
        seed=seed,
        fmt=fmt,
        since=since,
        until=until,
        harnesses=harnesses,
        min_steps=min_steps,
        by=by,
    )
    if as_json:
        _echo(dumps(s.to_dict()))
        return
    splits = ", ".join(f"{name} {n} ({s.runs[name]} runs)" for name, n in s.rows.items())
    _echo(
        f"Trajectories: {s.out}: {splits}; {s.duplicates} duplicates written once, {s.filtered} filtered out, "
        f"{s.without_text} sessions without text"
    )


def _parquet_text(s) -> str:
    rows = ", ".join(f"{t} {n}" for t, n in s.rows.items())
    return (
        f"Dataset: {s.out} ({s.privacy}): {rows}; partitions {s.partitions_written} written, "
        f"{s.partitions_unchanged} unchanged, {s.files_removed} files removed"
    )


@main.command()
@click.argument("dataset")
@DB_OPTION
@json_option("Print one JSON object with the rows loaded.")
@_errors
def load(dataset, db, as_json):
    """Load a Parquet DATASET (a folder or URI written by export parquet) into a new store,
    so that runs, show, sessions and query work on it.

    The dataset has no tool calls or file events: the store gets its sessions, usage, outcomes,
    runs, members, edges and artifacts as exported, and is not re-inferred. OCP documents exported
    from it keep node states, outcomes, evidence, signals and state notes, but run.task sees no
    written files (type research), and runs imported from OCP documents are not exported
    (DATASET.md, "Loading it back").
    """
    from sessiongraph.views.output import dumps

    summary = sessiongraph.load(dataset, db=db)
    if as_json:
        _echo(dumps(summary.to_dict()))
        return
    _echo(f"Loaded {summary.dataset} into {summary.db}: " + ", ".join(f"{t} {n}" for t, n in summary.rows.items()))
