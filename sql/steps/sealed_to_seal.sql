-- seal step: examples whose content is still in the main file although their created_at
-- falls in a sealed window of their org (windows as currently registered; once sealed, an
-- example's content stays in the companion whatever a later orgs file says).
-- Grain: one row per example to seal. Columns: example_id, org, window_name (the sealed window).
select e.example_id, e.org, w.window_name
from review_examples as e
join org_windows as w
  on w.org = e.org and w.sealed and e.created_at >= w.starts_at and e.created_at < w.ends_at
where e.example_id not in (select example_id from sealed_content)
