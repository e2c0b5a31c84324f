-- sessiongraph store, schema version 12 (sessiongraph/store.py SCHEMA_VERSION).
-- The frame tables mirror ingest/frames.py column for column (tests/test_schema.py checks it),
-- plus ingest_id: the ingest that wrote the row (and usage its dollars, sessiongraph/costs.py).

CREATE TABLE IF NOT EXISTS sessiongraph_meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS ingests (
    ingest_id      BIGINT PRIMARY KEY,
    started_at     TIMESTAMPTZ NOT NULL,
    finished_at    TIMESTAMPTZ,
    version        VARCHAR NOT NULL,
    roots          VARCHAR[],
    files_read     BIGINT,
    files_unchanged BIGINT,
    files_skipped  BIGINT
);

-- One row per file seen: its fingerprint decides whether the next ingest reads it again.
CREATE TABLE IF NOT EXISTS ingested_files (
    source_path    VARCHAR PRIMARY KEY,
    harness        VARCHAR,
    size_bytes     BIGINT NOT NULL,
    mtime_ns       BIGINT NOT NULL,
    status         VARCHAR NOT NULL,   -- parsed | skipped
    skip_reason    VARCHAR,
    n_sessions     BIGINT NOT NULL,
    n_diagnostics  BIGINT NOT NULL,
    privacy        VARCHAR,            -- the ingest privacy profile its rows were kept under
    ingest_id      BIGINT NOT NULL,
    ingested_at    TIMESTAMPTZ NOT NULL
);

-- Where the next ingest of a grown transcript may start reading (ingest/resume.py): the parser
-- state at the file's last complete line, for files of 1 MB and more. Replaced with the file's rows.
CREATE TABLE IF NOT EXISTS checkpoints (
    source_path    VARCHAR PRIMARY KEY,
    byte_offset    BIGINT NOT NULL,
    line           BIGINT NOT NULL,
    head_sha       VARCHAR NOT NULL,
    seam_sha       VARCHAR NOT NULL,
    state          BLOB NOT NULL,      -- plain data, no log text under metadata_only
    carry          BLOB                -- under metadata_only: launches/file_events rows of the shell
                                       -- calls the state covers (their commands are not kept)
);

CREATE TABLE IF NOT EXISTS sessions (
    session_id         VARCHAR NOT NULL,
    attempt            INTEGER,
    harness            VARCHAR NOT NULL,
    native_id          VARCHAR,
    agent_id           VARCHAR,
    session_kind       VARCHAR,
    layout             VARCHAR,
    harness_version    VARCHAR,
    source_path        VARCHAR NOT NULL,
    source_bytes       BIGINT,
    cwd                VARCHAR,  -- canonical (ingest/paths.py)
    cwd_as_written     VARCHAR,  -- as the log spelled it
    git_branch         VARCHAR,
    git_commit         VARCHAR,
    git_repo           VARCHAR,
    started_at         TIMESTAMPTZ,
    ended_at           TIMESTAMPTZ,
    model              VARCHAR,
    entrypoint         VARCHAR,
    originator         VARCHAR,
    slug               VARCHAR,
    parent_native_id   VARCHAR,
    parent_agent_id    VARCHAR,
    parent_tool_use_id VARCHAR,
    spawn_depth        INTEGER,
    agent_type         VARCHAR,
    agent_name         VARCHAR,   -- a Claude teammate's name
    team_name          VARCHAR,   -- the Claude agent team the session worked in
    forked_from_id     VARCHAR,
    root_native_id     VARCHAR,
    continued_from_id  VARCHAR,
    caused_by_id       VARCHAR,
    depends_on         VARCHAR[],
    first_prompt_hash  VARCHAR,
    final_answer_hash  VARCHAR,   -- sha256 of the last assistant text (launch evidence)
    n_records          BIGINT,
    n_copied           BIGINT,    -- records copied from another session, kept out of the frames
    state              VARCHAR,   -- OCP node state, when the log records one
    waiting_on         VARCHAR,
    status             VARCHAR,   -- OCP attempt status, when the log records one
    outcome_tier       VARCHAR,   -- verified | reported | heuristic | asserted
    end_status         VARCHAR,   -- how the log ends: completed | error | interrupted | unknown
    end_line           BIGINT,    -- the record that says so
    ingest_id          BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS calls (
    session_id        VARCHAR NOT NULL,
    call_id           VARCHAR,
    tool              VARCHAR,
    kind              VARCHAR,
    started_at        TIMESTAMPTZ,
    ended_at          TIMESTAMPTZ,
    cwd               VARCHAR,
    command           VARCHAR,
    paths             VARCHAR[],
    subagent_type     VARCHAR,
    description       VARCHAR,
    run_in_background BOOLEAN,
    agent_name        VARCHAR,
    team_name         VARCHAR,
    prompt_hash       VARCHAR,
    result_agent_id   VARCHAR,
    progress_agent_id VARCHAR,
    output_ids        VARCHAR[],
    output_hash       VARCHAR,    -- sha256 of a shell call's captured output (launch evidence)
    exit_code         INTEGER,
    is_error          BOOLEAN,
    source_path       VARCHAR NOT NULL,
    line              BIGINT,
    ingest_id         BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS file_events (
    session_id  VARCHAR NOT NULL,
    call_id     VARCHAR,
    ts          TIMESTAMPTZ,
    path        VARCHAR NOT NULL,
    op          VARCHAR NOT NULL,
    how         VARCHAR,
    tier        VARCHAR NOT NULL,
    source_path VARCHAR NOT NULL,
    line        BIGINT,
    ingest_id   BIGINT NOT NULL
);

-- Agent-CLI runs found in shell commands at ingest (ingest/shell_facts.py): the launch pass reads
-- these, never the command text.
CREATE TABLE IF NOT EXISTS launches (
    session_id  VARCHAR NOT NULL,
    call_id     VARCHAR,
    segment     INTEGER,
    ts          TIMESTAMPTZ,
    harness     VARCHAR NOT NULL,
    print_mode  BOOLEAN,
    resume      BOOLEAN,
    background  BOOLEAN,
    looped      BOOLEAN,
    cwd         VARCHAR,
    output_file VARCHAR,
    script      VARCHAR,
    review      BOOLEAN,
    source_path VARCHAR NOT NULL,
    line        BIGINT,
    ingest_id   BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS usage (
    session_id               VARCHAR NOT NULL,
    attempt                  INTEGER,
    ts                       TIMESTAMPTZ,
    model                    VARCHAR,
    message_id               VARCHAR,
    request_id               VARCHAR,
    input_tokens             BIGINT,
    output_tokens            BIGINT,
    cache_read_tokens        BIGINT,
    cache_creation_tokens    BIGINT,
    cache_creation_5m_tokens BIGINT,
    cache_creation_1h_tokens BIGINT,
    reasoning_tokens         BIGINT,
    source_path              VARCHAR NOT NULL,
    line                     BIGINT,
    ingest_id                BIGINT NOT NULL,
    -- Dollars, set by sessiongraph/costs.py right after the rows are written (costs.COLUMNS).
    usd                      DECIMAL(18,9),   -- null: no price for the model
    price_source             VARCHAR,
    priced_as                VARCHAR,
    model_id                 VARCHAR,
    priced_with              VARCHAR          -- the price set that priced the row; null: not yet
);

CREATE TABLE IF NOT EXISTS diagnostics (
    source_path VARCHAR NOT NULL,
    line        BIGINT,
    code        VARCHAR NOT NULL,
    detail      VARCHAR,
    harness     VARCHAR,
    count       BIGINT,            -- problems this row stands for (ingest/jsonl.py Diagnostics folds repeats)
    ingest_id   BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS documents (
    source_path VARCHAR NOT NULL,
    run_id      VARCHAR NOT NULL,
    producer    VARCHAR,
    ocp_version VARCHAR,
    document    VARCHAR NOT NULL,   -- canonical JSON of the document, converted to OCP 0.3
    ingest_id   BIGINT NOT NULL
);

-- State history, evidence and verdicts a log records (kind: state | evidence | verdict).
CREATE TABLE IF NOT EXISTS outcomes (
    session_id    VARCHAR NOT NULL,
    attempt       INTEGER,
    ts            TIMESTAMPTZ,
    kind          VARCHAR NOT NULL,
    native_state  VARCHAR,
    waiting_on    VARCHAR,
    evidence_kind VARCHAR,
    verifier      VARCHAR,
    criterion     INTEGER,
    accepted      BOOLEAN,
    tier          VARCHAR,
    ref           VARCHAR,
    source_path   VARCHAR NOT NULL,
    line          BIGINT,
    ingest_id     BIGINT NOT NULL
);

-- One row per event of a session, in its order (ingest/steps.py): no text, its length and sha256.
-- No source_path index: the table is the largest, and an index would slow every insert more than
-- the scan it saves when a changed file's rows are replaced.
CREATE TABLE IF NOT EXISTS steps (
    session_id        VARCHAR NOT NULL,
    attempt           INTEGER,
    seq               BIGINT NOT NULL,
    ts                TIMESTAMPTZ,
    role              VARCHAR NOT NULL,  -- user | assistant | tool | system
    kind              VARCHAR NOT NULL,  -- prompt | context | text | thinking | tool_call | tool_result | compaction | interrupt
    call_id           VARCHAR,
    tool              VARCHAR,
    is_error          BOOLEAN,
    model             VARCHAR,
    request_id        VARCHAR,
    input_tokens      BIGINT,            -- a response's tokens, on its first step
    output_tokens     BIGINT,
    cache_read_tokens BIGINT,
    cache_creation_tokens BIGINT,
    reasoning_tokens  BIGINT,
    n_bytes           BIGINT,            -- the content as compact JSON (ingest/steps.py)
    content_sha256    VARCHAR,
    parent_seq        BIGINT,            -- tree logs: the step this one follows
    source_path       VARCHAR NOT NULL,
    line              BIGINT,
    ingest_id         BIGINT NOT NULL
);

-- Step text, only from a --privacy full ingest: credentials masked, cut to --max-text-chars.
CREATE TABLE IF NOT EXISTS texts (
    session_id   VARCHAR NOT NULL,
    attempt      INTEGER,
    seq          BIGINT NOT NULL,
    text         VARCHAR,
    n_chars      BIGINT,
    cut_chars    BIGINT,
    source_path  VARCHAR NOT NULL,
    ingest_id    BIGINT NOT NULL
);

-- Commits, PRs and pushed branches a session made (ingest/commits.py): hashes, branches, URLs,
-- never a message. Verified rows from the logs; heuristic rows (evidence files_equal or
-- files_contain) and in_branch only from `ingest --git` (sessiongraph/gitlog.py), which writes
-- them with the session's source_path: a log read again keeps them (Store.write), a log pruned
-- takes them with it, the next `ingest --git` replaces them.
CREATE TABLE IF NOT EXISTS commits (
    session_id   VARCHAR NOT NULL,
    call_id      VARCHAR,
    ts           TIMESTAMPTZ,
    kind         VARCHAR NOT NULL,   -- commit | pr | push
    tier         VARCHAR NOT NULL,   -- verified | heuristic
    evidence     VARCHAR NOT NULL,
    repo         VARCHAR,
    branch       VARCHAR,
    commit_hash  VARCHAR,
    pr_url       VARCHAR,
    pr_number    BIGINT,
    in_branch    BOOLEAN,            -- null unless --git read the repository
    source_path  VARCHAR NOT NULL,
    line         BIGINT,
    ingest_id    BIGINT NOT NULL
);

-- What the last `ingest --git` found of each verified commit row (sessiongraph/gitlog.py): a log
-- read again without --git gets its rows' in_branch back from here (Store.write). Hash as the
-- row prints it; never a message or author.
CREATE TABLE IF NOT EXISTS commit_checks (
    session_id   VARCHAR NOT NULL,
    commit_hash  VARCHAR NOT NULL,
    in_branch    BOOLEAN,
    ingest_id    BIGINT NOT NULL
);

-- No index on source_path: DuckDB rewrites a whole ART index at every checkpoint (an ingest
-- checkpoints when it lets readers in), so indexes made a cold ingest quadratic; deleting a
-- file's rows scans the column instead (by a semi-join, which would not use an index anyway).
-- Stores made while these indexes were declared lose them here.
DROP INDEX IF EXISTS sessions_by_path;
DROP INDEX IF EXISTS calls_by_path;
DROP INDEX IF EXISTS file_events_by_path;
DROP INDEX IF EXISTS launches_by_path;
DROP INDEX IF EXISTS usage_by_path;
DROP INDEX IF EXISTS diagnostics_by_path;
DROP INDEX IF EXISTS documents_by_path;
DROP INDEX IF EXISTS outcomes_by_path;

-- What the passes must see together (inference/partitions.py): each file's linking keys, written
-- with its frames; the partition of each file and session as last inferred; and the files
-- written since (an ingest killed before inferring leaves them for the next one).
CREATE TABLE IF NOT EXISTS partition_keys (
    source_path VARCHAR NOT NULL,
    key         VARCHAR NOT NULL,
    active      BOOLEAN NOT NULL    -- links its holders (a write, a launch, an id); else only if some file holds it active
);

CREATE TABLE IF NOT EXISTS file_partitions (
    source_path  VARCHAR NOT NULL,
    partition_id VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS session_partitions (
    session_id   VARCHAR NOT NULL,
    partition_id VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS dirty_files (
    source_path VARCHAR NOT NULL
);

-- Inference: rebuilt, for the partitions an ingest's changed files were or are in, from their
-- frame rows, in one transaction. Columns mirror inference/edges.py (tests/test_schema.py checks it). No keys:
-- uniqueness is the passes' contract, tested there, and must never abort an ingest.

CREATE TABLE IF NOT EXISTS edges (
    edge_id     VARCHAR NOT NULL,
    kind        VARCHAR NOT NULL,   -- spawn | launch | artifact | continue | fork
    src         VARCHAR NOT NULL,   -- session_id
    dst         VARCHAR NOT NULL,   -- session_id
    tier        VARCHAR NOT NULL,   -- verified | heuristic | reported
    evidence    VARCHAR,
    pass        VARCHAR NOT NULL,
    src_call_id VARCHAR,
    dst_call_id VARCHAR,
    ts          TIMESTAMPTZ,
    lag_s       DOUBLE,
    path        VARCHAR,
    version     INTEGER,
    src_tier    VARCHAR,
    dst_tier    VARCHAR,
    run_id      VARCHAR NOT NULL
);

-- Edges whose ends lie in different runs (artifact flows and continuations across runs).
CREATE TABLE IF NOT EXISTS lineage (
    edge_id     VARCHAR NOT NULL,
    kind        VARCHAR NOT NULL,
    src         VARCHAR NOT NULL,
    dst         VARCHAR NOT NULL,
    tier        VARCHAR NOT NULL,
    evidence    VARCHAR,
    pass        VARCHAR NOT NULL,
    src_call_id VARCHAR,
    dst_call_id VARCHAR,
    ts          TIMESTAMPTZ,
    lag_s       DOUBLE,
    path        VARCHAR,
    version     INTEGER,
    src_tier    VARCHAR,
    dst_tier    VARCHAR,
    run_id      VARCHAR
);

CREATE TABLE IF NOT EXISTS runs (
    run_id           VARCHAR NOT NULL,
    root_session_id  VARCHAR NOT NULL,
    root_harness     VARCHAR,
    started_at       TIMESTAMPTZ,
    ended_at         TIMESTAMPTZ,
    n_sessions       BIGINT NOT NULL,
    n_spawns         BIGINT NOT NULL,
    n_launches       BIGINT NOT NULL,
    n_artifact_edges BIGINT NOT NULL,
    max_depth        INTEGER,
    harnesses        VARCHAR[],
    models           VARCHAR[],
    producer         VARCHAR           -- null for runs inferred from logs; else the importing document's
);

CREATE TABLE IF NOT EXISTS run_sessions (
    run_id            VARCHAR NOT NULL,
    session_id        VARCHAR NOT NULL,
    parent_session_id VARCHAR,
    via               VARCHAR,          -- spawn | launch | null for the root
    depth             INTEGER NOT NULL,
    role              VARCHAR,
    role_tier         VARCHAR,
    phase             VARCHAR
);

-- One row per version of a file: every write is a version.
CREATE TABLE IF NOT EXISTS artifacts (
    path      VARCHAR NOT NULL,
    version   INTEGER NOT NULL,
    producer  VARCHAR NOT NULL,
    call_id   VARCHAR,
    ts        TIMESTAMPTZ,
    how       VARCHAR,
    tier      VARCHAR,
    n_writes  BIGINT NOT NULL,
    n_reads   BIGINT NOT NULL,
    writers   VARCHAR[],
    consumers VARCHAR[]
);

CREATE TABLE IF NOT EXISTS inference_diagnostics (
    pass       VARCHAR NOT NULL,
    code       VARCHAR NOT NULL,
    session_id VARCHAR,
    call_id    VARCHAR,
    detail     VARCHAR,
    count      BIGINT NOT NULL,
    partition_id VARCHAR            -- the partition whose passes wrote it (inference/partitions.py)
);
