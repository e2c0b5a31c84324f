-- Token usage with each response counted once per session, even when several files log it
-- (a Codex thread resumed into a new rollout replays its token_count events).
CREATE OR REPLACE VIEW usage_dedup AS
SELECT *
FROM usage
QUALIFY row_number() OVER (PARTITION BY session_id, message_id ORDER BY source_path, line DESC) = 1;
