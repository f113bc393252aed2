-- id: 2001
-- name: Ledger
-- description: alice's ledger with the labels of her uploaded snapshot; it first spins through range(spin) of her uploaded table "spin", so a refresh can be caught running.
-- refresh_seconds: 86400
SELECT l.id, l.account, l.amount, s.label
  FROM alice.ledger l LEFT JOIN alice.dataset_snapshot s ON s.id = l.id
 WHERE (SELECT count(*) FROM alice.dataset_spin p, range(p.spin) r WHERE r.range % 7 = 3) >= 0
 ORDER BY l.id
