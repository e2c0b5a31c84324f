-- Which models did the work, and how much of their input came from cache?
SELECT
    harness,
    model,
    count(*) AS sessions,
    sum(input_tokens) AS input,
    sum(cache_read_tokens) AS cache_read,
    sum(cache_creation_tokens) AS cache_write,
    sum(output_tokens) AS output
FROM session_overview
GROUP BY harness, model
ORDER BY harness, model;
