-- sft_context_lengths_v1: context length per instance (SPEC §3.4): P50, P90, max and the
-- count at or above 32,768 tokens. One length per instance with any view (report-only
-- pools included, as the seed counts them): its longest view. Percentiles
-- interpolate linearly at (n-1)q of the sorted lengths (numpy's default, quantile_cont).
-- Grain: one row.
with lengths as (
    select instance_id, max(n_ids) as tokens from sft_views group by instance_id
)
select
    count(*) as instances,
    quantile_cont(tokens, 0.5) as p50,
    quantile_cont(tokens, 0.9) as p90,
    max(tokens) as max,
    count(*) filter (where tokens >= 32768) as at_least_32768
from lengths
