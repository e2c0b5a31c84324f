-- One row per session (a session resumed across several files is one row), with its tokens and
-- dollars (session_costs; 0 without a request, null when a request has no price).
CREATE OR REPLACE VIEW session_overview AS
WITH s AS (
    SELECT
        session_id,
        any_value(harness) AS harness,
        any_value(session_kind) AS session_kind,
        min(started_at) AS started_at,
        max(ended_at) AS ended_at,
        arg_max(model, n_records) AS model,
        any_value(entrypoint) AS entrypoint,
        any_value(cwd) AS cwd,
        count(*) AS n_files,
        -- how its last file ends (sessions.end_status; unknown where the adapter does not tell),
        -- and the record that says so
        coalesce(arg_max(end_status, coalesce(ended_at, started_at)), 'unknown') AS end_status,
        arg_max(source_path, coalesce(ended_at, started_at)) AS end_source,
        arg_max(end_line, coalesce(ended_at, started_at)) AS end_line
    FROM sessions
    GROUP BY session_id
), t AS (
    SELECT
        session_id,
        sum(input_tokens) AS input_tokens,
        sum(output_tokens) AS output_tokens,
        sum(cache_read_tokens) AS cache_read_tokens,
        sum(cache_creation_tokens) AS cache_creation_tokens,
        sum(cache_creation_5m_tokens) AS cache_creation_5m_tokens,
        sum(cache_creation_1h_tokens) AS cache_creation_1h_tokens,
        sum(reasoning_tokens) AS reasoning_tokens
    FROM usage_dedup
    GROUP BY session_id
)
SELECT
    s.*,
    coalesce(t.input_tokens, 0)::BIGINT AS input_tokens,
    coalesce(t.output_tokens, 0)::BIGINT AS output_tokens,
    coalesce(t.cache_read_tokens, 0)::BIGINT AS cache_read_tokens,
    coalesce(t.cache_creation_tokens, 0)::BIGINT AS cache_creation_tokens,
    coalesce(t.cache_creation_5m_tokens, 0)::BIGINT AS cache_creation_5m_tokens,
    coalesce(t.cache_creation_1h_tokens, 0)::BIGINT AS cache_creation_1h_tokens,
    coalesce(t.reasoning_tokens, 0)::BIGINT AS reasoning_tokens,
    coalesce(t.input_tokens + t.output_tokens + t.cache_read_tokens + t.cache_creation_tokens, 0)::BIGINT
        AS total_tokens,
    CASE WHEN c.session_id IS NULL THEN 0.0 ELSE c.usd END AS usd
FROM s LEFT JOIN t USING (session_id) LEFT JOIN session_costs c USING (session_id);
