/**
 * What users' SQL may call (DESIGN §10), decided once per DuckDB function rather than by a
 * list of forbidden words.
 *
 * The rule: a function is allowed when it computes from its arguments alone. ALLOWED_FUNCTIONS
 * is every scalar, aggregate and macro function of schema `main` in DuckDB 1.5.6's
 * `duckdb_functions()`, minus DENIED_FUNCTIONS (each with its reason: they read settings,
 * the catalog or session state, write something, or run SQL given as text) and the
 * optimizer's `__internal_*` helpers. The PostgreSQL shims of schema `pg_catalog` are left out
 * whole (several read the catalog: `pg_get_viewdef`, `format_type`). Table functions have their
 * own, much shorter list: only those that generate rows from their arguments.
 *
 * A call qualified by a catalog or by a schema other than `main` (`pg_catalog.x()`,
 * `system.main.x()`, `alice.x()`) is refused (tree-checker.ts). `main.x()` is decided by these
 * lists, as `x()` is: DuckDB's parser writes `main.` itself into the functions of its own syntax
 * (`[1, 2]` is `main.list_value`, and its SQL writer writes it back so), and DuckDB looks
 * `main.x` up as it looks up `x`, so that what could shadow a built-in for one would for the
 * other (test/queries/qualified-functions.test.ts).
 *
 * test/queries/allowed-functions.test.ts recomputes the split from the DuckDB in use: a
 * DuckDB upgrade that adds a function fails that test until someone decides on it, so a new
 * function is refused, never allowed by default.
 */

/** Names separated by white space (no DuckDB function or type name holds any). */
const words = (text: string): string[] => text.trim().split(/\s+/);

/** Functions users' SQL may not call, and why. */
export const DENIED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['current_setting', 'reads the database settings'],
  ['getvariable', 'reads session variables'],
  ['current_database', 'reads the catalog'],
  ['current_catalog', 'reads the catalog'],
  ['current_schema', 'reads the search path'],
  ['current_schemas', 'reads the search path'],
  ['in_search_path', 'reads the search path'],
  ['get_block_size', 'reads the storage pragmas'],
  ['make_type', 'looks types up in the catalog by name'],
  ['current_query', 'reads the connection state'],
  ['current_query_id', 'reads the connection state'],
  ['current_connection_id', 'reads the connection state'],
  ['current_transaction_id', 'reads the connection state'],
  ['txid_current', 'reads the connection state'],
  ['nextval', 'advances a sequence'],
  ['currval', 'reads a sequence'],
  ['setseed', "changes the connection's random state"],
  ['write_log', "writes to DuckDB's log"],
  ['sleep_ms', 'holds a query slot without doing work'],
  ['json_serialize_sql', 'parses SQL given as text'],
  ['json_deserialize_sql', 'writes SQL from a parse tree'],
  ['json_serialize_plan', 'plans SQL given as text against the catalog'],
]);

/** Names the binder handles itself, which `duckdb_functions()` does not list as scalars. */
export const BINDER_FUNCTIONS = ['unnest', 'unlist', 'grouping', 'grouping_id'];

/** Scalar, aggregate and window functions, lowercase (DuckDB matches names ignoring case). */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  ...BINDER_FUNCTIONS,
  ...words(`
!__postfix !~~ !~~* % & && * ** + - ->> / // <-> << <=> <@ >> @ @> ^ ^@ abs acos acosh add age
aggregate ago alias any_value apply approx_count_distinct approx_quantile approx_top_k arbitrary
arg_max arg_max_null arg_max_nulls_last arg_min arg_min_null arg_min_nulls_last argmax argmin
array_agg array_aggr array_aggregate array_append array_apply array_cat array_concat array_contains
array_cosine_distance array_cosine_similarity array_cross_product array_distance array_distinct
array_dot_product array_extract array_filter array_grade_up array_has array_has_all array_has_any
array_indexof array_inner_product array_intersect array_length array_negative_dot_product
array_negative_inner_product array_pop_back array_pop_front array_position array_prepend
array_push_back array_push_front array_reduce array_resize array_reverse array_reverse_sort
array_select array_slice array_sort array_to_json array_to_string array_to_string_comma_default
array_transform array_unique array_value array_where array_zip ascii asin asinh atan atan2 atanh avg
bar base64 bin bit_and bit_count bit_length bit_or bit_position bit_xor bitstring bitstring_agg
bool_and bool_or can_cast_implicitly cardinality cast_to_type cbrt ceil ceiling century char_length
character_length chr combine concat concat_ws constant_or_null contains corr cos cosh cot count
count_if count_star countif covar_pop covar_samp create_sort_key cume_dist current_date
current_localtime current_localtimestamp current_role current_user damerau_levenshtein date_add
date_diff date_part date_sub date_trunc datediff datepart datesub datetrunc day dayname dayofmonth
dayofweek dayofyear days_in_month decade decode degrees dense_rank divide editdist3 element_at
encode ends_with entropy enum_code enum_first enum_last enum_range enum_range_boundary epoch
epoch_ms epoch_ns epoch_us equi_width_bins era error even exp factorial favg fdiv fill filter
finalize first first_value flatten floor fmod format format_bytes formatreadabledecimalsize
formatreadablesize from_base64 from_binary from_hex from_json from_json_strict fsum gamma gcd
gen_random_uuid generate_series generate_subscripts geomean geometric_mean get_bit get_current_time
get_current_timestamp get_type grade_up greatest greatest_common_divisor group_concat hamming hash
hex histogram histogram_exact hour icu_collate_af icu_collate_am icu_collate_ar icu_collate_ar_sa
icu_collate_as icu_collate_az icu_collate_be icu_collate_bg icu_collate_bn icu_collate_bo
icu_collate_br icu_collate_bs icu_collate_ca icu_collate_ceb icu_collate_chr icu_collate_cs
icu_collate_cy icu_collate_da icu_collate_de icu_collate_de_at icu_collate_dsb icu_collate_dz
icu_collate_ee icu_collate_el icu_collate_en icu_collate_en_us icu_collate_eo icu_collate_es
icu_collate_et icu_collate_fa icu_collate_fa_af icu_collate_ff icu_collate_fi icu_collate_fil
icu_collate_fo icu_collate_fr icu_collate_fr_ca icu_collate_ga icu_collate_gl icu_collate_gu
icu_collate_ha icu_collate_haw icu_collate_he icu_collate_he_il icu_collate_hi icu_collate_hr
icu_collate_hsb icu_collate_hu icu_collate_hy icu_collate_id icu_collate_id_id icu_collate_ig
icu_collate_is icu_collate_it icu_collate_ja icu_collate_ka icu_collate_kk icu_collate_kl
icu_collate_km icu_collate_kn icu_collate_ko icu_collate_kok icu_collate_ku icu_collate_ky
icu_collate_lb icu_collate_lkt icu_collate_ln icu_collate_lo icu_collate_lt icu_collate_lv
icu_collate_mk icu_collate_ml icu_collate_mn icu_collate_mr icu_collate_ms icu_collate_mt
icu_collate_my icu_collate_nb icu_collate_nb_no icu_collate_ne icu_collate_nl icu_collate_nn
icu_collate_noaccent icu_collate_om icu_collate_or icu_collate_pa icu_collate_pa_in icu_collate_pl
icu_collate_ps icu_collate_pt icu_collate_ro icu_collate_ru icu_collate_sa icu_collate_se
icu_collate_si icu_collate_sk icu_collate_sl icu_collate_smn icu_collate_sq icu_collate_sr
icu_collate_sr_ba icu_collate_sr_me icu_collate_sr_rs icu_collate_sv icu_collate_sw icu_collate_ta
icu_collate_te icu_collate_th icu_collate_tk icu_collate_to icu_collate_tr icu_collate_ug
icu_collate_uk icu_collate_ur icu_collate_uz icu_collate_vi icu_collate_wae icu_collate_wo
icu_collate_xh icu_collate_yi icu_collate_yo icu_collate_yue icu_collate_yue_cn icu_collate_zh
icu_collate_zh_cn icu_collate_zh_hk icu_collate_zh_mo icu_collate_zh_sg icu_collate_zh_tw
icu_collate_zu icu_sort_key ilike_escape instr is_histogram_other_bin isfinite isinf isnan isodow
isoyear jaccard jaro_similarity jaro_winkler_similarity json json_array json_array_length
json_contains json_exists json_extract json_extract_path json_extract_path_text json_extract_string
json_group_array json_group_object json_group_structure json_keys json_merge_patch json_object
json_pretty json_quote json_structure json_transform json_transform_strict json_type json_valid
json_value julian kahan_sum kurtosis kurtosis_pop lag last last_day last_value lcase lcm lead least
least_common_multiple left left_grapheme len length length_grapheme levenshtein lgamma like_escape
list list_aggr list_aggregate list_any_value list_append list_apply list_approx_count_distinct
list_avg list_bit_and list_bit_or list_bit_xor list_bool_and list_bool_or list_cat list_concat
list_contains list_cosine_distance list_cosine_similarity list_count list_distance list_distinct
list_dot_product list_element list_entropy list_extract list_filter list_first list_grade_up
list_has list_has_all list_has_any list_histogram list_indexof list_inner_product list_intersect
list_kurtosis list_kurtosis_pop list_last list_mad list_max list_median list_min list_mode
list_negative_dot_product list_negative_inner_product list_pack list_position list_prepend
list_product list_reduce list_resize list_reverse list_reverse_sort list_select list_sem
list_skewness list_slice list_sort list_stddev_pop list_stddev_samp list_string_agg list_sum
list_transform list_unique list_value list_var_pop list_var_samp list_where list_zip listagg ln log
log10 log2 lower lpad ltrim mad make_date make_time make_timestamp make_timestamp_ms
make_timestamp_ns make_timestamptz map map_concat map_contains map_contains_entry map_contains_value
map_entries map_extract map_extract_value map_from_entries map_keys map_values max max_by md5
md5_number md5_number_lower md5_number_upper mean median microsecond millennium millisecond min
min_by minute mismatches mod mode month monthname multiply nanosecond nextafter nfc_normalize
normalized_interval not_ilike_escape not_like_escape now nth_value ntile nullif octet_length ord
parse_dirname parse_dirpath parse_duckdb_log_message parse_filename parse_formatted_bytes parse_path
percent_rank pi position pow power prefix printf product quantile quantile_cont quantile_disc
quarter radians random range rank rank_dense reduce regexp_escape regexp_extract regexp_extract_all
regexp_full_match regexp_matches regexp_replace regexp_split_to_array regexp_split_to_table
regr_avgx regr_avgy regr_count regr_intercept regr_r2 regr_slope regr_sxx regr_sxy regr_syy
remap_struct repeat replace replace_type reservoir_quantile reverse right right_grapheme round
round_even roundbankers row row_number row_to_json rpad rtrim second sem session_user set_bit sha1
sha256 sign signbit sin sinh skewness split split_part sqrt st_asbinary st_astext st_aswkb st_aswkt
st_crs st_geomfromwkb st_intersects_extent st_setcrs starts_with stats stddev stddev_pop stddev_samp
str_split str_split_regex strftime string_agg string_split string_split_regex string_to_array
strip_accents strlen strpos strptime struct_concat struct_contains struct_extract struct_extract_at
struct_has struct_indexof struct_insert struct_keys struct_pack struct_position struct_update
struct_values substr substring substring_grapheme subtract suffix sum sum_no_overflow sumkahan
switch tan tanh time_bucket timetz_byte_comparable timezone timezone_hour timezone_minute to_base
to_base64 to_binary to_centuries to_days to_decades to_hex to_hours to_json to_microseconds
to_millennia to_milliseconds to_minutes to_months to_quarters to_seconds to_timestamp to_weeks
to_years today transaction_timestamp translate trim trunc try_strptime typeof ucase unbin unhex
unicode union_extract union_tag union_value unpivot_list upper url_decode url_encode user uuid
uuid_extract_timestamp uuid_extract_version uuidv4 uuidv7 var_pop var_samp variance
variant_bytes_to_variant variant_extract variant_normalize variant_to_parquet_variant variant_typeof
vector_type version wavg week weekday weekofyear weighted_avg xor year yearweek | || ~ ~~ ~~* ~~~
`),
]);

/**
 * Table functions that only generate rows from their arguments. Every other one reads
 * files (`read_csv`, `read_parquet`, `glob`…), the catalog or settings (`duckdb_*`,
 * `pragma_*`, `summary`), runs SQL given as text (`query`, `query_table`,
 * `json_execute_serialized_sql`) or reads a table by name (`histogram`).
 */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  'range',
  'generate_series',
  'unnest',
  'repeat',
  'repeat_row',
  'json_each',
  'json_tree',
]);

/**
 * Type names a cast may use that the parser leaves for the binder to look up (`json`,
 * `enum(...)`, `geometry`…): DuckDB's built-in types (`duckdb_types()` of the system catalog).
 * A name outside this list could only be a user-defined type looked up in the catalog.
 */
export const BUILT_IN_TYPE_NAMES: ReadonlySet<string> = new Set([
  'time with time zone',
  'timestamp with time zone',
  ...words(`
array bigint bignum binary bit bitstring blob bool boolean bpchar bytea char date datetime dec
decimal double enum float float4 float8 geometry guid hugeint int int1 int128 int16 int2 int32 int4
int64 int8 integer integral interval json list logical long map null numeric nvarchar oid real row
short signed smallint string struct text time time_ns timestamp timestamp_ms timestamp_ns
timestamp_s timestamp_us timestamptz timetz tinyint type ubigint uhugeint uint128 uint16 uint32
uint64 uint8 uinteger union usmallint utinyint uuid varbinary varchar variant varint
`),
]);
