-- half_suffix_mix_v1: the suffix mix of each registered half's training rows (SPEC §2.4).
-- Grain key: version, org, half, suffix.
-- Grain: one row per (version, org, half, suffix) with at least one training row.
-- Columns: rows (training rows of the half with this file suffix; '' = no suffix);
--   half_rows (training rows of the half); share (rows / half_rows, 0..1).
with training as (
    select version, org, half, suffix
    from review_splits
    where is_training and half is not null
),
totals as (
    select version, org, half, count(*) as half_rows from training group by all
)
select
    t.version,
    t.org,
    t.half,
    t.suffix,
    count(*) as rows,
    any_value(h.half_rows) as half_rows,
    count(*) / any_value(h.half_rows) as share
from training as t
join totals as h using (version, org, half)
group by t.version, t.org, t.half, t.suffix
