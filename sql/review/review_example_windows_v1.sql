-- review_example_windows_v1: the registered window each built example falls in.
-- Grain: one row per built example (review_examples). Windows of one org never overlap
-- (checked when the org configuration is loaded), so the join adds no rows.
-- Columns: example_id; org; window_name (null when no window holds created_at, or
--   created_at is unknown); sealed (true for the sealed test window); is_training
--   (true for the window later shares are compared against).
select
    e.example_id,
    e.org,
    w.window_name,
    coalesce(w.sealed, false) as sealed,
    coalesce(w.is_training, false) as is_training
from review_examples as e
left join org_windows as w
    on w.org = e.org
   and e.created_at >= w.starts_at
   and e.created_at < w.ends_at
