-- Files one session wrote and another session read later (raw material of artifact edges).
SELECT w.path, w.session_id AS writer, r.session_id AS reader, w.ts AS written_at, r.ts AS read_at
FROM file_events w
JOIN file_events r ON r.path = w.path AND r.op = 'read' AND r.ts > w.ts AND r.session_id <> w.session_id
WHERE w.op = 'write'
ORDER BY w.path, r.ts;
