-- suggested_edit_share_by_half_v1: suggested-edit share of built examples per org, window
-- and registered half (SPEC §2.3), and its ratio to the same half's training-window share.
-- Grain key: version, org, window_name, half.
-- Grain: one row per (version, org, window, half); half '(none)' holds projects in neither
-- half, window '(none)' examples no window covers. Windows and halves are the version's
-- (its registration when refined). Sealed windows are excluded.
-- Columns: examples; suggested_edit; share (0..1); training_share (the half's share in the
--   training window); ratio_to_training (share / training_share; null when that is 0 or unknown).
with counted as (
    select
        r.version,
        r.org,
        coalesce(r.window_name, '(none)') as window_name,
        coalesce(r.half, '(none)') as half,
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
    select version, org, half, share as training_share from shared where is_training
)
select
    s.version,
    s.org,
    s.window_name,
    s.half,
    s.examples,
    s.suggested_edit,
    s.share,
    t.training_share,
    case when t.training_share > 0 then s.share / t.training_share end as ratio_to_training
from shared as s
left join training as t using (version, org, half)
