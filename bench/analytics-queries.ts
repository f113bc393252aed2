/**
 * The analytics benchmark's queries (issue 27) over the star schema of bench/star-schema.ts,
 * as analysts write them: multi-way joins, correlated, `IN`, `EXISTS` and `NOT EXISTS`
 * subqueries, `GROUP BY … HAVING`, window functions, CTEs used twice, `ORDER BY … LIMIT`,
 * `LIKE` and date-range filters; a point lookup and a dimension-only query for the small end,
 * a 5,000-row answer for a result larger than a page of JSON rendered at the run. Every one has an
 * `ORDER BY` that fixes the order of every row, so two runs' answers compare row by row.
 * Tables are named as their owner writes them (unqualified: the caller's namespace).
 */

export interface AnalyticsQuery {
  name: string;
  sql: string;
}

export const ANALYTICS_QUERIES: readonly AnalyticsQuery[] = [
  {
    name: 'q01 monthly revenue by region (3 tables)',
    sql: `SELECT c.year, c.month, st.region, sum(s.net_amount) AS revenue, count(*) AS lines
FROM dataset_sales s JOIN dataset_calendar c ON c.date_key = s.date_key JOIN dataset_stores st ON st.store_id = s.store_id
GROUP BY c.year, c.month, st.region ORDER BY c.year, c.month, st.region`,
  },
  {
    name: 'q02 top products of a category in a quarter (ORDER BY LIMIT)',
    sql: `SELECT p.sku, p.name, sum(s.net_amount) AS revenue, sum(s.quantity) AS units
FROM dataset_sales s JOIN dataset_products p ON p.product_id = s.product_id
WHERE s.date_key BETWEEN DATE '2024-04-01' AND DATE '2024-06-30' AND p.category = 'Electronics'
GROUP BY p.sku, p.name ORDER BY revenue DESC, p.sku LIMIT 20`,
  },
  {
    name: 'q03 customers above twice their segment average (correlated, CTE twice)',
    sql: `WITH spend AS (SELECT customer_id, sum(net_amount) AS total FROM dataset_sales GROUP BY customer_id)
SELECT cu.segment, count(*) AS customers, sum(sp.total) AS spend
FROM spend sp JOIN dataset_customers cu ON cu.customer_id = sp.customer_id
WHERE sp.total > (SELECT 2 * avg(sp2.total) FROM spend sp2 JOIN dataset_customers cu2 ON cu2.customer_id = sp2.customer_id WHERE cu2.segment = cu.segment)
GROUP BY cu.segment ORDER BY cu.segment`,
  },
  {
    name: 'q04 products unsold in December (NOT EXISTS)',
    sql: `SELECT p.category, count(*) AS unsold
FROM dataset_products p
WHERE NOT p.discontinued
  AND NOT EXISTS (SELECT 1 FROM dataset_sales s WHERE s.product_id = p.product_id AND s.date_key >= DATE '2024-12-01')
GROUP BY p.category ORDER BY p.category`,
  },
  {
    name: 'q05 sales under summer promotions (IN, LIKE)',
    sql: `SELECT st.country, count(*) AS lines, sum(s.discount_amount) AS discounts
FROM dataset_sales s JOIN dataset_stores st ON st.store_id = s.store_id
WHERE s.promo_id IN (SELECT promo_id FROM dataset_promotions WHERE promo_code LIKE 'SUMMER%')
GROUP BY st.country ORDER BY discounts DESC, st.country`,
  },
  {
    name: 'q06 customers buying on the web and in store (EXISTS twice)',
    sql: `SELECT cu.loyalty_tier, cu.segment, count(*) AS customers
FROM dataset_customers cu
WHERE EXISTS (SELECT 1 FROM dataset_sales s WHERE s.customer_id = cu.customer_id AND s.channel = 'web')
  AND EXISTS (SELECT 1 FROM dataset_sales s WHERE s.customer_id = cu.customer_id AND s.channel = 'store')
GROUP BY cu.loyalty_tier, cu.segment ORDER BY cu.loyalty_tier, cu.segment`,
  },
  {
    name: 'q07 stores discounting most in 2023 (HAVING, timestamp range)',
    sql: `SELECT st.store_code, st.name, count(*) AS lines,
  sum(s.discount_amount) / sum(s.net_amount + s.discount_amount) AS discount_rate
FROM dataset_sales s JOIN dataset_stores st ON st.store_id = s.store_id
WHERE s.sold_at >= TIMESTAMP '2023-01-01 00:00:00' AND s.sold_at < TIMESTAMP '2024-01-01 00:00:00'
GROUP BY st.store_code, st.name
HAVING count(*) > 2700 AND sum(s.discount_amount) / sum(s.net_amount + s.discount_amount) > 0.046
ORDER BY discount_rate DESC, st.store_code`,
  },
  {
    name: 'q08 running revenue, rank and growth by region and month (windows)',
    sql: `WITH m AS (
  SELECT st.region, date_trunc('month', s.date_key) AS month, sum(s.net_amount) AS revenue
  FROM dataset_sales s JOIN dataset_stores st ON st.store_id = s.store_id GROUP BY st.region, date_trunc('month', s.date_key))
SELECT region, month, revenue,
  sum(revenue) OVER (PARTITION BY region, year(month) ORDER BY month) AS year_to_date,
  rank() OVER (PARTITION BY region, year(month) ORDER BY revenue DESC) AS rank_in_year,
  revenue / lag(revenue) OVER (PARTITION BY region ORDER BY month) - 1 AS growth
FROM m ORDER BY region, month`,
  },
  {
    name: 'q09 three best products per category (window, QUALIFY)',
    sql: `SELECT p.category, p.sku, p.name, sum(s.net_amount) AS revenue,
  row_number() OVER (PARTITION BY p.category ORDER BY sum(s.net_amount) DESC, p.sku) AS place
FROM dataset_sales s JOIN dataset_products p ON p.product_id = s.product_id
GROUP BY p.category, p.sku, p.name
QUALIFY place <= 3 ORDER BY p.category, place`,
  },
  {
    name: 'q10 stores above their region average per month (CTE twice)',
    sql: `WITH store_month AS (
  SELECT s.store_id, st.region, date_trunc('month', s.date_key) AS month, sum(s.net_amount) AS revenue
  FROM dataset_sales s JOIN dataset_stores st ON st.store_id = s.store_id
  WHERE s.date_key >= DATE '2024-01-01' GROUP BY s.store_id, st.region, date_trunc('month', s.date_key)),
region_month AS (SELECT region, month, avg(revenue) AS average FROM store_month GROUP BY region, month)
SELECT sm.region, sm.month, count(*) FILTER (WHERE sm.revenue > 1.5 * rm.average) AS stars, count(*) AS stores
FROM store_month sm JOIN region_month rm ON rm.region = sm.region AND rm.month = sm.month
GROUP BY sm.region, sm.month ORDER BY sm.region, sm.month`,
  },
  {
    name: 'q11 year-over-year growth per category (CTE self-join)',
    sql: `WITH yearly AS (
  SELECT p.category, year(s.date_key) AS yr, sum(s.net_amount) AS revenue
  FROM dataset_sales s JOIN dataset_products p ON p.product_id = s.product_id GROUP BY p.category, year(s.date_key))
SELECT cur.category, cur.yr, cur.revenue, prev.revenue AS previous, cur.revenue / prev.revenue - 1 AS growth
FROM yearly cur LEFT JOIN yearly prev ON prev.category = cur.category AND prev.yr = cur.yr - 1
ORDER BY cur.category, cur.yr`,
  },
  {
    name: 'q12 2024 cohorts by months since first purchase',
    sql: `WITH first_purchase AS (
  SELECT customer_id, date_trunc('month', min(sold_at)) AS cohort FROM dataset_sales GROUP BY customer_id)
SELECT f.cohort, date_diff('month', f.cohort, date_trunc('month', s.sold_at)) AS months_after,
  count(DISTINCT s.customer_id) AS active, sum(s.net_amount) AS revenue
FROM dataset_sales s JOIN first_purchase f ON f.customer_id = s.customer_id
WHERE f.cohort >= TIMESTAMP '2024-01-01 00:00:00'
GROUP BY f.cohort, months_after ORDER BY f.cohort, months_after`,
  },
  {
    name: 'q13 wireless products sold in EMEA since July (ILIKE, 3 tables)',
    sql: `SELECT p.brand, count(*) AS lines, sum(s.quantity) AS units
FROM dataset_sales s JOIN dataset_products p ON p.product_id = s.product_id JOIN dataset_stores st ON st.store_id = s.store_id
WHERE p.name ILIKE '%wireless%' AND st.region = 'EMEA' AND s.date_key >= DATE '2024-07-01'
GROUP BY p.brand ORDER BY units DESC, p.brand LIMIT 25`,
  },
  {
    name: 'q14 Black Friday week by hour and channel (timestamp range)',
    sql: `SELECT hour(sold_at) AS hour, channel, count(*) AS lines, avg(net_amount) AS average
FROM dataset_sales
WHERE sold_at BETWEEN TIMESTAMP '2024-11-25 00:00:00' AND TIMESTAMP '2024-12-01 23:59:59'
GROUP BY hour(sold_at), channel ORDER BY hour, channel`,
  },
  {
    name: 'q15 returns by category and reason (second fact, 3 tables)',
    sql: `SELECT p.category, r.reason_code, count(*) AS returns, sum(r.refund_amount) AS refunded,
  sum(r.refund_amount) / sum(s.net_amount) AS refunded_share
FROM dataset_returns r JOIN dataset_sales s ON s.sale_id = r.sale_id JOIN dataset_products p ON p.product_id = s.product_id
GROUP BY p.category, r.reason_code ORDER BY p.category, r.reason_code`,
  },
  {
    name: 'q16 one order with its products (point lookup)',
    sql: `SELECT s.sale_id, s.sold_at, p.sku, p.name, s.quantity, s.unit_price, s.net_amount
FROM dataset_sales s JOIN dataset_products p ON p.product_id = s.product_id
WHERE s.order_code = 'O-01234567' ORDER BY s.sale_id`,
  },
  {
    name: 'q17 distinct customers per country and quarter (count distinct, 3 tables)',
    sql: `SELECT cu.country, c.year, c.quarter, count(DISTINCT s.customer_id) AS customers
FROM dataset_sales s JOIN dataset_customers cu ON cu.customer_id = s.customer_id JOIN dataset_calendar c ON c.date_key = s.date_key
GROUP BY cu.country, c.year, c.quarter ORDER BY cu.country, c.year, c.quarter`,
  },
  {
    name: 'q18 basket size percentiles per channel in 2024 (quantiles)',
    sql: `WITH baskets AS (
  SELECT order_code, channel, sum(net_amount) AS basket FROM dataset_sales
  WHERE date_key >= DATE '2024-01-01' GROUP BY order_code, channel)
SELECT channel, count(*) AS orders, quantile_cont(basket, 0.5) AS median_basket, quantile_cont(basket, 0.9) AS p90_basket
FROM baskets GROUP BY channel ORDER BY channel`,
  },
  {
    name: 'q19 stores per region (one dimension)',
    sql: `SELECT region, count(*) AS stores, min(opened_on) AS first_opened, sum(floor_sqm) AS floor_sqm
FROM dataset_stores GROUP BY region ORDER BY region`,
  },
  {
    name: 'q20 weekend promotion sales by tier and category (6 tables)',
    sql: `SELECT cu.loyalty_tier, p.category, count(*) AS lines, sum(s.net_amount) AS revenue
FROM dataset_sales s
  JOIN dataset_customers cu ON cu.customer_id = s.customer_id
  JOIN dataset_products p ON p.product_id = s.product_id
  JOIN dataset_stores st ON st.store_id = s.store_id
  JOIN dataset_calendar c ON c.date_key = s.date_key
  JOIN dataset_promotions pr ON pr.promo_id = s.promo_id
WHERE c.is_weekend AND st.country IN ('FR', 'DE', 'IT', 'ES') AND pr.discount_pct >= 10
GROUP BY cu.loyalty_tier, p.category ORDER BY cu.loyalty_tier, p.category`,
  },
  {
    name: 'q21 best 5,000 customers of 2024 (5,000 rows)',
    sql: `SELECT cu.customer_code, cu.first_name || ' ' || cu.last_name AS name, cu.email,
  round(sum(s.net_amount), 2) AS spend, count(DISTINCT s.order_code) AS orders, max(s.sold_at) AS last_purchase
FROM dataset_sales s JOIN dataset_customers cu ON cu.customer_id = s.customer_id
WHERE s.date_key >= DATE '2024-01-01'
GROUP BY cu.customer_code, cu.first_name, cu.last_name, cu.email
ORDER BY spend DESC, cu.customer_code LIMIT 5000`,
  },
  {
    name: 'q22 recent returns mentioning a broken item (LIKE on comments)',
    sql: `SELECT r.reason_code, count(*) AS returns, sum(r.refund_amount) AS refunded, max(r.returned_at) AS latest
FROM dataset_returns r
WHERE r.comment LIKE '%broken%' AND r.returned_at >= TIMESTAMP '2024-10-01 00:00:00'
GROUP BY r.reason_code ORDER BY r.reason_code`,
  },
];
