-- Commits, PRs and pushed branches (the commits table) with the run and the dollars of the
-- session and the run that made them, summed by the one rule (usd_total, costs.sql).
CREATE OR REPLACE VIEW commit_costs AS
SELECT
    c.session_id,
    m.run_id,
    c.kind,
    c.tier,
    c.evidence,
    c.ts,
    coalesce(c.repo, s.git_repo) AS repo,
    coalesce(c.branch, s.git_branch) AS branch,
    c.commit_hash,
    c.pr_url,
    c.pr_number,
    c.in_branch,
    sc.usd AS session_usd,
    rc.usd AS run_usd,
    c.source_path,
    c.line
FROM commits c
LEFT JOIN run_sessions m USING (session_id)
LEFT JOIN (SELECT session_id, any_value(git_repo) AS git_repo, any_value(git_branch) AS git_branch
           FROM sessions GROUP BY session_id) s USING (session_id)
LEFT JOIN session_costs sc USING (session_id)
LEFT JOIN run_costs rc ON rc.run_id = m.run_id;

-- Dollars per branch and per PR: the runs that made a commit, push or PR there, each run counted
-- once (a branch's repo is any its rows name: a commit line names none, its PR does); each commit
-- once too, though several sessions may hold it (ingest --git gives each its row).
CREATE OR REPLACE VIEW branch_costs AS
WITH r AS (SELECT branch, run_id, any_value(repo) AS repo
           FROM commit_costs WHERE branch IS NOT NULL AND run_id IS NOT NULL GROUP BY branch, run_id),
n AS (SELECT branch, count(DISTINCT commit_hash) FILTER (kind = 'commit') AS commits
      FROM commit_costs WHERE branch IS NOT NULL AND run_id IS NOT NULL GROUP BY branch)
SELECT r.branch, any_value(r.repo) AS repo, count(*) AS runs, any_value(n.commits)::BIGINT AS commits,
       usd_total(rc.usd) AS usd
FROM r JOIN run_costs rc USING (run_id) JOIN n USING (branch)
GROUP BY r.branch;

CREATE OR REPLACE VIEW pr_costs AS
WITH r AS (SELECT DISTINCT pr_url, any_value(repo) OVER (PARTITION BY pr_url) AS repo,
                  any_value(pr_number) OVER (PARTITION BY pr_url) AS pr_number, run_id
           FROM commit_costs WHERE pr_url IS NOT NULL AND run_id IS NOT NULL)
SELECT r.pr_url, any_value(r.repo) AS repo, any_value(r.pr_number) AS pr_number, count(*) AS runs,
       usd_total(rc.usd) AS usd
FROM r JOIN run_costs rc USING (run_id)
GROUP BY r.pr_url;
