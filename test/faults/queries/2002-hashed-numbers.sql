-- id: 2002
-- name: Hashed numbers
-- description: alice's uploaded table "numbers", each with 64 hex characters of hash: a result that takes some room to store.
-- refresh_seconds: 86400
SELECT n, md5(n::VARCHAR) || md5((n + 1)::VARCHAR) AS hash FROM alice.dataset_numbers ORDER BY n
