-- reconciliation_v1: a version against its base version, per org and window (SPEC §2.3):
-- base kept - removed + resurrected + added = new kept, with the removals and
-- resurrections cross-checked against the stored attribution.
-- Grain key: version, org, window_name.
-- Grain: one row per (version, org, window) for every version that names a base version;
-- the window is the new version's ('(none)' when no registered window holds the
-- example). Counts rows of sealed windows (counts only, no content).
-- Columns: version; base_version; org; window_name;
--   base_kept (examples the base keeps);
--   removed (kept by the base, removed by this version);
--   removed_by_new_rules (of those, removed under a rule the base does not apply);
--   resurrected (built when the base was refined, not kept by it, kept by this version);
--   resurrected_twins (of those, flagged resurrected: an earlier twin was removed by a rule);
--   added (kept by this version, loaded after the base was refined);
--   kept (examples this version keeps);
--   reconciles (base_kept - removed + resurrected + added = kept, every removal is by a
--   new rule and every resurrection is a resurrected twin).
with pairs as (
    select
        v.version,
        v.base_version,
        n.org,
        coalesce(n.window_name, '(none)') as window_name,
        coalesce(b.kept, false) as base_kept,
        b.example_id is null as not_in_base,
        n.kept as new_kept,
        n.resurrected,
        n.removed_reason is not null and not list_contains(bv.rules, n.removed_reason) as by_new_rule
    from corpus_versions as v
    join corpus_versions as bv on bv.version = v.base_version
    join refine_examples as n on n.version = v.version
    left join refine_examples as b on b.version = v.base_version and b.example_id = n.example_id
),
counted as (
    select
        version,
        base_version,
        org,
        window_name,
        count(*) filter (where base_kept) as base_kept,
        count(*) filter (where base_kept and not new_kept) as removed,
        count(*) filter (where base_kept and not new_kept and by_new_rule) as removed_by_new_rules,
        count(*) filter (where new_kept and not base_kept and not not_in_base) as resurrected,
        count(*) filter (where new_kept and not base_kept and not not_in_base and resurrected) as resurrected_twins,
        count(*) filter (where new_kept and not_in_base) as added,
        count(*) filter (where new_kept) as kept
    from pairs
    group by all
)
select
    *,
    base_kept - removed + resurrected + added = kept
        and removed = removed_by_new_rules
        and resurrected = resurrected_twins as reconciles
from counted
