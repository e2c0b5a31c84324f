-- Every edge, inside a run (edges) or across runs (lineage).
CREATE OR REPLACE VIEW all_edges AS
SELECT * FROM edges
UNION ALL BY NAME
SELECT * FROM lineage;
