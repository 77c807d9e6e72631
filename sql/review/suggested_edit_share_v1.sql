-- suggested_edit_share_v1: share of built examples carrying a suggested edit, per org and
-- window, and each window's share relative to the org's training window (SPEC §2.3).
-- Grain key: version, org, window_name.
-- Grain: one row per (version, org, window); window '(none)' holds examples no registered
-- window covers. Windows are the version's (its registration when refined). Sealed
-- windows are excluded from this view.
-- Columns: examples (built examples in the window); suggested_edit (examples whose kept
--   comments open a strict ```suggestion fence); share (suggested_edit / examples, 0..1);
--   training_share (the same share in the org's training window, null when none);
--   ratio_to_training (share / training_share; null when the training share is 0 or unknown).
with counted as (
    select
        r.version,
        r.org,
        coalesce(r.window_name, '(none)') as window_name,
        r.window_training as is_training,
        count(*) as examples,
        count(*) filter (where r.suggested_edit) as suggested_edit
    from refine_examples as r
    where not r.window_sealed
    group by all
),
shared as (
    select *, suggested_edit / examples as share from counted
),
training as (
    select version, org, share as training_share from shared where is_training
)
select
    s.version,
    s.org,
    s.window_name,
    s.examples,
    s.suggested_edit,
    s.share,
    t.training_share,
    case when t.training_share > 0 then s.share / t.training_share end as ratio_to_training
from shared as s
left join training as t using (version, org)
