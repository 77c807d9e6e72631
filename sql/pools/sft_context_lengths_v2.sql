-- sft_context_lengths_v2: context length per instance (SPEC §3.4): P50, P90, max and the
-- count at or above 32,768 tokens, with each instance counted once however many trajectories
-- it has (issue 27: sft_context_lengths_v1 took the views of an instance's later attempts,
-- instance_id '<instance>#<n>' as `views build` writes them, for instances of their own).
-- Percentiles interpolate linearly at (n-1)q of the sorted lengths (numpy's default,
-- quantile_cont).
-- Scope: every instance with any view, report-only pools included (as v1); its length is
--   its longest view over all its attempts (sft_instances_v3.tokens). report_only_instances
--   says how many of the instances are counted only through report-only views.
-- Grain key: none (one row).
-- Grain: one row. Columns: instances; report_only_instances; p50; p90; max; at_least_32768.
with lengths as (
    select coalesce(a.instance, v.instance_id) as instance, max(v.n_ids) as tokens,
           count(t.view_id) = 0 as report_only
    from sft_views as v
    left join sft_trajectories as a on a.instance_id = v.instance_id
    left join sft_training_views_v1 as t using (view_id)
    group by coalesce(a.instance, v.instance_id)
)
select
    count(*) as instances,
    count(*) filter (where report_only) as report_only_instances,
    quantile_cont(tokens, 0.5) as p50,
    quantile_cont(tokens, 0.9) as p90,
    max(tokens) as max,
    count(*) filter (where tokens >= 32768) as at_least_32768
from lengths
