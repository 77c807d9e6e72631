-- refine_removals_v1: removals by reason and org for every refined corpus version (SPEC §2.2, §2.3).
-- Grain key: version, org.
-- Grain: one row per (version, org), plus one row per version with org = '(all)'.
-- Each removed example is counted under the FIRST rule that removes it, in SPEC order:
-- service_account, rebase_successor, suggested_edit, applied_fix, duplicate.
-- Columns (counts of examples unless said otherwise):
--   built; removed_service_account; removed_rebase_successor; removed_suggested_edit;
--   removed_applied_fix; removed_duplicate; removed (their sum); resurrected (kept although
--   an earlier twin exists that a rule removed); kept (= built - removed);
--   service_comments (comments by service accounts, in comments); service_comments_dropped
--   (comments removed from prompts by the service_account rule, in comments).
-- Counts include rows of sealed windows (counts only, no content).
with examples as (
    select
        r.*,
        (select count(*) from refine_comments as c
          where c.version = r.version and c.example_id = r.example_id and c.dropped) as dropped_comments
    from refine_examples as r
)
select
    version,
    coalesce(org, '(all)') as org,
    count(*) as built,
    count(*) filter (where removed_reason = 'service_account') as removed_service_account,
    count(*) filter (where removed_reason = 'rebase_successor') as removed_rebase_successor,
    count(*) filter (where removed_reason = 'suggested_edit') as removed_suggested_edit,
    count(*) filter (where removed_reason = 'applied_fix') as removed_applied_fix,
    count(*) filter (where removed_reason = 'duplicate') as removed_duplicate,
    count(*) filter (where removed_reason is not null) as removed,
    count(*) filter (where resurrected) as resurrected,
    count(*) filter (where kept) as kept,
    sum(service_comments)::bigint as service_comments,
    sum(dropped_comments)::bigint as service_comments_dropped
from examples
group by grouping sets ((version, org), (version))
