-- sft_segment_deviations_v2: the views to look at in the segment-level mask audit
-- (issue 9): each (view, role, segment) whose pattern differs from its pool's majority
-- in sft_segment_patterns_v2 (e.g. the end of turn never trained where the pool trains
-- it, the header trained where the pool does not), every view with a pattern where the
-- pool has no majority, and every view whose segments are unknown.
-- Grain key: view_id, role, segment.
-- Grain: one row per (view, role, segment) listed; one row per view for 'unknown'.
-- Columns: view_id; pool; instance_id; role (null for outside / unknown); segment;
--   pattern (always / never / partly; null for unknown); majority_pattern (the pool's;
--   null on a tie or for unknown); scope_tokens, scope_supervised (what the pattern read,
--   see sft_segment_supervision_v2); finding: deviates | no_majority | segments_unknown.
-- Same rows as sft_segment_deviations_v1, read from sft_segment_supervision_v2 and
-- sft_segment_patterns_v2 (v1's rows without an ASOF JOIN); it runs on Spark too (README
-- "Beyond one machine").
with per_view as (
    select * from sft_segment_supervision_v2
),
pools as (
    select pool, role, segment, majority_pattern from sft_segment_patterns_v2
),
judged as (
    select v.view_id, v.pool, v.instance_id, v.role, v.segment, v.pattern, p.majority_pattern,
           v.scope_tokens, v.scope_supervised,
           case
               when v.segment = 'unknown' then 'segments_unknown'
               when v.pattern is null then null
               when p.majority_pattern is null then 'no_majority'
               when v.pattern <> p.majority_pattern then 'deviates'
           end as finding
    from per_view as v
    join pools as p on p.pool = v.pool and p.role is not distinct from v.role and p.segment = v.segment
)
select * from judged where finding is not null
