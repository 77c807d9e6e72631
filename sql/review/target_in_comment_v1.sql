-- target_in_comment_v1: examples whose target a reviewer typed into a comment (SPEC §2.2,
-- reported, never removed). The target, whitespace-normalized per line and at least the
-- version's min_target_chars characters (default 20), occurs verbatim in the same
-- normalization of a kept comment; only examples WITHOUT a suggested edit are judged.
-- Grain key: version, org.
-- Grain: one row per (version, org), plus one row per version with org = '(all)'.
-- Columns: min_target_chars; judged (built examples without a suggested edit);
--   target_in_comment (of those); share (0..1); judged_kept and target_in_comment_kept
--   (the same among examples the version keeps).
select
    r.version,
    coalesce(r.org, '(all)') as org,
    any_value(v.min_target_chars) as min_target_chars,
    count(*) filter (where not r.suggested_edit) as judged,
    count(*) filter (where not r.suggested_edit and r.target_in_comment) as target_in_comment,
    count(*) filter (where not r.suggested_edit and r.target_in_comment)
        / nullif(count(*) filter (where not r.suggested_edit), 0) as share,
    count(*) filter (where not r.suggested_edit and r.kept) as judged_kept,
    count(*) filter (where not r.suggested_edit and r.kept and r.target_in_comment) as target_in_comment_kept
from refine_examples as r
join corpus_versions as v using (version)
group by grouping sets ((r.version, r.org), (r.version))
