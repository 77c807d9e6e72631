-- sft_segment_patterns_v2: per pool, how each segment of each role is supervised across
-- its views, the pool's majority pattern and the views that deviate from it (issue 9,
-- segment-level mask audit; per-view figures in sft_segment_supervision_v2, one row per
-- deviating view in sft_segment_deviations_v2).
-- Grain key: pool, role, segment.
-- Grain: one row per (pool, role, segment); role null for 'outside' and 'unknown'.
-- Majority: the pattern (always / never / partly) held by the most views of the pool
--   that have a pattern for the segment; null when two patterns tie (then every view
--   with a pattern is listed as deviating: none is presumed right). Views without a
--   pattern (the segment lies only in untrained assistant messages; segments unknown)
--   are counted apart and never deviate.
-- Columns: pool; role; segment; views (views holding the segment, or with unknown
--   segments); always_views; never_views; partly_views; no_pattern_views; tokens;
--   supervised (summed over the views); majority_pattern; deviating_views;
--   deviating_view_ids (sorted, comma-separated); note: for segment 'unknown',
--   'segments unknown: loaded without --tokenizer (cut them with views segments
--   --tokenizer T)'; on a tie, 'no majority: patterns tie'; else null.
-- Same rows as sft_segment_patterns_v1, read from sft_segment_supervision_v2 (the same rows as
-- v1's, without an ASOF JOIN); it runs on Spark too (README "Beyond one machine").
with per_view as (
    select * from sft_segment_supervision_v2
),
tallies as (
    select pool, role, segment, pattern, count(*) as n
    from per_view
    where pattern is not null
    group by pool, role, segment, pattern
),
majority as (
    select pool, role, segment,
           case when count(*) filter (where n = top) = 1 then max(pattern) filter (where n = top) end as majority_pattern
    from (select *, max(n) over (partition by pool, role, segment) as top from tallies)
    group by pool, role, segment
),
judged as (
    select p.*, m.majority_pattern,
           p.pattern is not null and (m.majority_pattern is null or p.pattern <> m.majority_pattern) as deviates
    from per_view as p
    left join majority as m on m.pool = p.pool and m.role is not distinct from p.role and m.segment = p.segment
),
final as (
    select pool, role, segment,
           count(*) as views,
           count(*) filter (where pattern = 'always') as always_views,
           count(*) filter (where pattern = 'never') as never_views,
           count(*) filter (where pattern = 'partly') as partly_views,
           count(*) filter (where pattern is null) as no_pattern_views,
           sum(tokens)::bigint as tokens,
           sum(supervised)::bigint as supervised,
           any_value(majority_pattern) as majority_pattern,
           count(*) filter (where deviates) as deviating_views,
           string_agg(view_id, ', ' order by view_id) filter (where deviates) as deviating_view_ids
    from judged
    group by pool, role, segment
)
select *,
       case
           when segment = 'unknown' then 'segments unknown: loaded without --tokenizer (cut them with views segments --tokenizer T)'
           when majority_pattern is null and always_views + never_views + partly_views > 0 then 'no majority: patterns tie'
       end as note
from final
