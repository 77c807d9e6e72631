-- label_audit_v1: valid share per rater (SPEC §2.3), with n and a Wilson 95% interval.
-- Grain key: version, rater, scope.
-- Grain: one row per (version, rater, scope), scope one of:
--   'all scored' (every loaded item of the rater), 'kept by version' (items whose example
--   the version keeps), 'suggested edit' (items whose example carries a suggested edit).
-- Columns: n (items); valid (items labelled valid); share (valid / n, 0..1);
--   wilson_low, wilson_high: Wilson score interval at z = 1.959963984540054 (95%):
--   (p + z^2/2n -/+ z*sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n).
with items as (
    select
        v.version,
        l.rater,
        l.valid,
        coalesce(r.kept, false) as kept,
        coalesce(r.suggested_edit, false) as suggested_edit
    from label_items as l
    cross join corpus_versions as v
    left join refine_examples as r on r.version = v.version and r.example_id = l.example_id
),
scoped as (
    select version, rater, 'all scored' as scope, valid from items
    union all
    select version, rater, 'kept by version' as scope, valid from items where kept
    union all
    select version, rater, 'suggested edit' as scope, valid from items where suggested_edit
),
counted as (
    select version, rater, scope, count(*) as n, count(*) filter (where valid) as valid
    from scoped
    group by all
),
shares as (
    select *, valid / n as p, 1.959963984540054 as z from counted
)
select
    version,
    rater,
    scope,
    n,
    valid,
    p as share,
    (p + z * z / (2 * n) - z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n) as wilson_low,
    (p + z * z / (2 * n) + z * sqrt(p * (1 - p) / n + z * z / (4 * n * n))) / (1 + z * z / n) as wilson_high
from shares
