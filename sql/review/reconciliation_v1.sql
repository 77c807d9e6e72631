-- reconciliation_v1: a version against its base version, per org and window (SPEC §2.3):
-- base kept - removed + resurrected = new kept, with the removals and resurrections
-- cross-checked against the stored attribution.
-- Grain: one row per (version, org, window) for every version that names a base version;
-- window '(none)' holds examples no registered window covers. Counts rows of sealed
-- windows (counts only, no content).
-- Columns: version; base_version; org; window_name;
--   base_kept (examples the base keeps);
--   removed (kept by the base, removed by this version);
--   removed_by_new_rules (of those, removed under a rule the base does not apply);
--   resurrected (kept by this version, not by the base);
--   resurrected_twins (of those, flagged resurrected: an earlier twin was removed by a rule);
--   kept (examples this version keeps);
--   reconciles (base_kept - removed + resurrected = kept, every removal is by a new rule and
--   every newcomer is a resurrected twin).
with pairs as (
    select
        v.version,
        v.base_version,
        n.org,
        n.example_id,
        b.kept as base_kept,
        n.kept as new_kept,
        n.resurrected,
        n.removed_reason is not null and not list_contains(bv.rules, n.removed_reason) as by_new_rule
    from corpus_versions as v
    join corpus_versions as bv on bv.version = v.base_version
    join refine_examples as n on n.version = v.version
    join refine_examples as b on b.version = v.base_version and b.example_id = n.example_id
),
counted as (
    select
        p.version,
        p.base_version,
        p.org,
        coalesce(w.window_name, '(none)') as window_name,
        count(*) filter (where p.base_kept) as base_kept,
        count(*) filter (where p.base_kept and not p.new_kept) as removed,
        count(*) filter (where p.base_kept and not p.new_kept and p.by_new_rule) as removed_by_new_rules,
        count(*) filter (where p.new_kept and not p.base_kept) as resurrected,
        count(*) filter (where p.new_kept and not p.base_kept and p.resurrected) as resurrected_twins,
        count(*) filter (where p.new_kept) as kept
    from pairs as p
    join review_example_windows_v1 as w using (example_id)
    group by all
)
select
    *,
    base_kept - removed + resurrected = kept
        and removed = removed_by_new_rules
        and resurrected = resurrected_twins as reconciles
from counted
