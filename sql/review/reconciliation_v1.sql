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
--   removed_by_changed_rules (of those, removed as suggested_edit when the base applied
--   another version of the suggestion rule, corpus_versions.suggestion_rule);
--   suggestion_rule_base, suggestion_rule (the two versions' suggestion rules);
--   resurrected (built when the base was refined, not kept by it, kept by this version);
--   resurrected_twins (of those, flagged resurrected: an earlier twin was removed by a rule);
--   resurrected_by_changed_rules (of those, removed by the base as suggested_edit under
--   another version of the suggestion rule);
--   added (kept by this version, loaded after the base was refined);
--   kept (examples this version keeps);
--   reconciles (base_kept - removed + resurrected + added = kept, every removal is by a
--   new or changed rule and every resurrection is a resurrected twin or by a changed rule).
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
        n.removed_reason is not null and not list_contains(bv.rules, n.removed_reason) as by_new_rule,
        n.removed_reason = 'suggested_edit' and list_contains(bv.rules, n.removed_reason)
            and bv.suggestion_rule is distinct from v.suggestion_rule as by_changed_rule,
        coalesce(b.removed_reason = 'suggested_edit', false)
            and bv.suggestion_rule is distinct from v.suggestion_rule as base_by_changed_rule,
        bv.suggestion_rule as suggestion_rule_base,
        v.suggestion_rule
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
        count(*) filter (where base_kept and not new_kept and by_changed_rule) as removed_by_changed_rules,
        any_value(suggestion_rule_base) as suggestion_rule_base,
        any_value(suggestion_rule) as suggestion_rule,
        count(*) filter (where new_kept and not base_kept and not not_in_base) as resurrected,
        count(*) filter (where new_kept and not base_kept and not not_in_base and resurrected) as resurrected_twins,
        count(*) filter (where new_kept and not base_kept and not not_in_base and base_by_changed_rule)
            as resurrected_by_changed_rules,
        count(*) filter (where new_kept and not base_kept and not not_in_base
                         and (resurrected or base_by_changed_rule)) as resurrected_explained,
        count(*) filter (where new_kept and not_in_base) as added,
        count(*) filter (where new_kept) as kept
    from pairs
    group by all
)
select
    * exclude (resurrected_explained),
    base_kept - removed + resurrected + added = kept
        and removed = removed_by_new_rules + removed_by_changed_rules
        and resurrected = resurrected_explained as reconciles
from counted
