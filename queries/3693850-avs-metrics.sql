-- id: 3693850
-- name: AVS metrics
-- description: Per AVS: registered operators, their stakers and the value locked per strategy token.
-- refresh_seconds: default
--
-- The definitions are DESIGN.md §6. Events order by (block_number, log_index); on an exact tie
-- the row inserted later (higher rowid) wins. An event without a block number or log index
-- has no place in that order and is never anyone's latest event. arg_max_null keeps a latest
-- event whose value is NULL (plain arg_max would skip it and pick an older event).
--
-- Shares are summed exactly (BIGNUM) per operator, staker and strategy, and again over the
-- AVS's operators; only the per-AVS, per-strategy total becomes a DOUBLE. That also makes
-- the result independent of the order in which threads add things up.
WITH avs AS (
  -- One row per AVS address; if an address was inserted twice, its later name wins.
  SELECT avs_contract_address, arg_max_null(avs_name, rowid) AS avs_name
  FROM restaking.avs
  GROUP BY avs_contract_address
),
strategy AS (
  -- Likewise the later row of a strategy listed twice. Strategies not listed here count
  -- in no column: they are dropped by the joins and the IN filter below.
  SELECT strategy,
    arg_max_null(token, rowid) AS token,
    arg_max_null(shares_to_underlying, rowid) AS shares_to_underlying
  FROM restaking.strategies
  GROUP BY strategy
),
registered AS (
  -- (operator, AVS) pairs whose latest registration event says registered.
  SELECT operator, avs_contract_address
  FROM restaking.operator_avs_registrations
  WHERE block_number IS NOT NULL AND log_index IS NOT NULL
  GROUP BY operator, avs_contract_address
  HAVING arg_max_null(status, (block_number, log_index, rowid)) = 1
),
delegation AS (
  -- Each staker's latest delegation event.
  SELECT staker, arg_max_null({'operator': operator, 'delegated': delegated}, (block_number, log_index, rowid)) AS latest
  FROM restaking.staker_delegations
  WHERE block_number IS NOT NULL AND log_index IS NOT NULL
  GROUP BY staker
),
position AS (
  -- Net shares per operator, staker and strategy: the finest grain both the value locked
  -- and the staker count need, so the big table is read once.
  SELECT operator, staker, strategy, sum(shares_delta) AS net
  FROM restaking.operator_share_changes
  GROUP BY operator, staker, strategy
),
operator_strategy AS (
  -- All of an operator's shares, whoever the staker.
  SELECT operator, strategy, sum(net) AS net
  FROM position
  GROUP BY operator, strategy
),
positive AS (
  SELECT operator, staker
  FROM position
  WHERE net > 0 AND strategy IN (SELECT strategy FROM strategy)
),
operator_stakers AS (
  -- A staker has one latest delegation, so it counts for one operator at most and the
  -- per-AVS staker count is a plain sum over the AVS's operators (no DISTINCT needed).
  SELECT d.latest.operator AS operator, count(*) AS stakers
  FROM delegation d SEMI JOIN positive p ON p.staker = d.staker AND p.operator = d.latest.operator
  WHERE d.latest.delegated
  GROUP BY d.latest.operator
),
avs_people AS (
  SELECT r.avs_contract_address, count(*) AS num_operators, sum(coalesce(s.stakers, 0)) AS num_stakers
  FROM registered r LEFT JOIN operator_stakers s ON s.operator = r.operator
  GROUP BY r.avs_contract_address
),
avs_strategy AS (
  SELECT r.avs_contract_address, o.strategy, sum(o.net) AS net
  FROM registered r JOIN operator_strategy o ON o.operator = r.operator
  GROUP BY r.avs_contract_address, o.strategy
),
avs_token AS (
  -- Token units: shares times the strategy's rate, over 1e18 (wei-like units).
  SELECT a.avs_contract_address,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'cbETH') AS cbeth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'stETH') AS steth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'rETH') AS reth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'ETHx') AS ethx,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'ankrETH') AS ankreth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'OETH') AS oeth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'osETH') AS oseth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'swETH') AS sweth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'wBETH') AS wbeth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'sfrxETH') AS sfrxeth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'lsETH') AS lseth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'mETH') AS meth,
    sum(a.net::DOUBLE * s.shares_to_underlying / 1e18) FILTER (WHERE s.token = 'beacon_chain_ETH') AS beacon
  FROM avs_strategy a JOIN strategy s ON s.strategy = a.strategy
  GROUP BY a.avs_contract_address
),
metrics AS (
  -- An AVS without operators or shares gets zeros, not NULLs.
  SELECT a.avs_name, a.avs_contract_address,
    coalesce(p.num_operators, 0) AS num_operators,
    coalesce(p.num_stakers, 0)::BIGINT AS num_stakers,
    coalesce(t.cbeth, 0)::DOUBLE AS c1, coalesce(t.steth, 0)::DOUBLE AS c2, coalesce(t.reth, 0)::DOUBLE AS c3,
    coalesce(t.ethx, 0)::DOUBLE AS c4, coalesce(t.ankreth, 0)::DOUBLE AS c5, coalesce(t.oeth, 0)::DOUBLE AS c6,
    coalesce(t.oseth, 0)::DOUBLE AS c7, coalesce(t.sweth, 0)::DOUBLE AS c8, coalesce(t.wbeth, 0)::DOUBLE AS c9,
    coalesce(t.sfrxeth, 0)::DOUBLE AS c10, coalesce(t.lseth, 0)::DOUBLE AS c11, coalesce(t.meth, 0)::DOUBLE AS c12,
    coalesce(t.beacon, 0)::DOUBLE AS c13
  FROM avs a
    LEFT JOIN avs_people p ON p.avs_contract_address = a.avs_contract_address
    LEFT JOIN avs_token t ON t.avs_contract_address = a.avs_contract_address
)
SELECT
  avs_name,
  avs_contract_address,
  num_operators,
  -- The spec's column order, left to right, so the rounding is reproducible.
  c1 + c2 + c3 + c4 + c5 + c6 + c7 + c8 + c9 + c10 + c11 + c12 + c13 AS "total_TVL",
  num_stakers,
  c1 AS "cbETH_TVL",
  c2 AS "stETH_TVL",
  c3 AS "rETH_TVL",
  c4 AS "ETHx_TVL",
  c5 AS "ankrETH_TVL",
  c6 AS "OETH_TVL",
  c7 AS "osETH_TVL",
  c8 AS "swETH_TVL",
  c9 AS "wBETH_TVL",
  c10 AS "sfrxETH_TVL",
  c11 AS "lsETH_TVL",
  c12 AS "mETH_TVL",
  c13 AS "beacon_chain_ETH_TVL"
FROM metrics
ORDER BY "total_TVL" DESC, avs_contract_address ASC
