-- Dollars: usage rows are priced at ingest (sessiongraph/costs.py); these views sum them.
--
-- The one rule for summing dollars, used by every view here, the report and the exports:
-- usd_total is the exact sum of the usage rows' dollars (DECIMAL: the same in any order), rounded
-- to the microdollar, and null as soon as one row has no price (an unknown cost is never shown
-- as 0 or as a partial sum); usd_priced is the sum of the priced rows alone.
CREATE OR REPLACE MACRO usd_total(x) AS
    CASE WHEN bool_or(x IS NULL) THEN NULL ELSE round(coalesce(sum(x), 0), 6)::DOUBLE END;
CREATE OR REPLACE MACRO usd_priced(x) AS round(coalesce(sum(x), 0), 6)::DOUBLE;
-- The one rule for counting requests: a usage row is one request unless it holds a session's
-- totals (scope 'session', ingest/frames.py USAGE_SCOPES; null is a request). Tokens and dollars
-- count every row, so a session row once; requests count only request rows.
CREATE OR REPLACE MACRO is_request(scope) AS coalesce(scope, 'request') = 'request';
CREATE OR REPLACE MACRO n_requests(scope) AS count(*) FILTER (WHERE is_request(scope));
-- A harness's own dollars (reported_usd, e.g. Crush's session cost): summed exactly, apart from
-- ours and never added to them; null when no row has one.
CREATE OR REPLACE MACRO reported_total(x) AS round(sum(x::DECIMAL(18,9)), 6)::DOUBLE;

-- One row per request or session total (usage_dedup; scope says which), with its run, harness,
-- UTC day and total tokens.
CREATE OR REPLACE VIEW usage_costs AS
SELECT
    u.session_id,
    m.run_id,
    s.harness,
    u.model,
    u.model_id,
    coalesce(u.ts, s.started_at) AS ts,
    CAST(timezone('UTC', coalesce(u.ts, s.started_at)) AS DATE) AS day,
    u.source_path,
    coalesce(u.attempt, 1) AS attempt,
    u.input_tokens,
    u.output_tokens,
    u.cache_read_tokens,
    u.cache_creation_tokens,
    u.cache_creation_5m_tokens,
    u.cache_creation_1h_tokens,
    u.reasoning_tokens,
    coalesce(u.scope, 'request') AS scope,
    -- whether the row records any token count (a Crush session's records none: only its dollars)
    (u.input_tokens IS NOT NULL OR u.output_tokens IS NOT NULL OR u.cache_read_tokens IS NOT NULL
        OR u.cache_creation_tokens IS NOT NULL) AS counted,
    (coalesce(u.input_tokens, 0) + coalesce(u.output_tokens, 0) + coalesce(u.cache_read_tokens, 0)
        + coalesce(u.cache_creation_tokens, 0))::BIGINT AS tokens,
    u.usd,
    u.reported_usd,
    u.price_source,
    u.priced_as,
    u.priced_with
FROM usage_dedup u
LEFT JOIN (SELECT session_id, any_value(harness) AS harness, min(started_at) AS started_at
           FROM sessions GROUP BY session_id) s USING (session_id)
LEFT JOIN run_sessions m USING (session_id);

-- Dollars per session (sessions with usage rows only; session_overview has every session).
CREATE OR REPLACE VIEW session_costs AS
SELECT
    session_id,
    any_value(run_id) AS run_id,
    any_value(harness) AS harness,
    n_requests(scope) AS requests,
    sum(tokens)::BIGINT AS tokens,
    usd_total(usd) AS usd,
    usd_priced(usd) AS usd_priced,
    count(*) FILTER (usd IS NULL AND is_request(scope)) AS unpriced_requests,
    coalesce(sum(tokens) FILTER (usd IS NULL), 0)::BIGINT AS unpriced_tokens,
    reported_total(reported_usd) AS reported_usd
FROM usage_costs
GROUP BY session_id;

-- Dollars per run: its root, its subagents and the sessions it launched (run_sessions); a run
-- without a usage row costs 0.
CREATE OR REPLACE VIEW run_costs AS
WITH c AS (
    SELECT
        run_id,
        n_requests(scope) AS requests,
        sum(tokens)::BIGINT AS tokens,
        usd_total(usd) AS usd,
        usd_priced(usd) AS usd_priced,
        count(*) FILTER (usd IS NULL AND is_request(scope)) AS unpriced_requests,
        coalesce(sum(tokens) FILTER (usd IS NULL), 0)::BIGINT AS unpriced_tokens,
        reported_total(reported_usd) AS reported_usd
    FROM usage_costs
    WHERE run_id IS NOT NULL
    GROUP BY run_id
)
SELECT
    r.run_id,
    r.root_session_id,
    r.root_harness,
    r.started_at,
    r.ended_at,
    r.n_sessions,
    r.n_spawns,
    r.n_launches,
    coalesce(c.requests, 0) AS requests,
    coalesce(c.tokens, 0)::BIGINT AS tokens,
    CASE WHEN c.run_id IS NULL THEN 0.0 ELSE c.usd END AS usd,
    coalesce(c.usd_priced, 0.0) AS usd_priced,
    coalesce(c.unpriced_requests, 0) AS unpriced_requests,
    coalesce(c.unpriced_tokens, 0)::BIGINT AS unpriced_tokens,
    c.reported_usd
FROM runs r LEFT JOIN c USING (run_id);

-- Dollars per harness and model (model_id: the canonical id, pricing.normalise_model), with the
-- price sources that priced it.
CREATE OR REPLACE VIEW model_costs AS
SELECT
    harness,
    coalesce(model_id, '(none)') AS model,
    n_requests(scope) AS requests,
    sum(tokens)::BIGINT AS tokens,
    usd_total(usd) AS usd,
    usd_priced(usd) AS usd_priced,
    coalesce(sum(tokens) FILTER (usd IS NULL), 0)::BIGINT AS unpriced_tokens,
    reported_total(reported_usd) AS reported_usd,
    list(DISTINCT coalesce(price_source, '(no price)') ORDER BY coalesce(price_source, '(no price)')) AS sources,
    list(DISTINCT priced_as ORDER BY priced_as) FILTER (priced_as IS NOT NULL) AS priced_as
FROM usage_costs
GROUP BY ALL;

-- Dollars per UTC day (of each request), harness and model.
CREATE OR REPLACE VIEW daily_costs AS
SELECT
    day,
    harness,
    coalesce(model_id, '(none)') AS model,
    n_requests(scope) AS requests,
    sum(tokens)::BIGINT AS tokens,
    usd_total(usd) AS usd,
    usd_priced(usd) AS usd_priced,
    coalesce(sum(tokens) FILTER (usd IS NULL), 0)::BIGINT AS unpriced_tokens,
    reported_total(reported_usd) AS reported_usd
FROM usage_costs
GROUP BY ALL;
