-- check_sft_contract_v1: the SFT contract (SPEC §3.2) as checks, one per contract check
-- and pool (issue 26), read from sft_contract_summary_v1. A view that trains nothing
-- (contract_trains_nothing) and a kept assistant message with no supervised position
-- (contract_kept_message_trains_nothing) are contract failures like the rest.
-- Grain key: check_name, scope.
-- Grain: one row per (contract check, pool); with no SFT view loaded, one row per contract
--   check with scope 'corpus', not run.
-- Columns (the check columns, shared by every check_*_v1 view and documented in
--   check_findings_at_v1): check_name ('contract_' || sft_contract_v1.check_name); area
--   ('sft'); severity ('error'); scope ('pool=<pool>'); tested (views the check could be
--   made on); failing (views failing it); error_if ('failing > 0'); warn_if (null);
--   reason (why not run when tested is 0 or null; how many views were not checked when
--   some were); detail (null); drill_down (SQL listing the failing views with their
--   position and reason).
with names(check_name, cause) as (
    values ('lengths', null),
           ('vocab', 'no tokenizer given at load (load views --tokenizer T)'),
           ('mask_values', null),
           ('spans', 'the views have no message spans'),
           ('supervised_in_kept_assistant', 'the views have no message spans'),
           ('keep_msgs_assistant', 'no view names keep_msgs'),
           ('ledger', 'no view claims ledger counts'),
           ('declared_sha256', 'no view declares its source file'),
           ('same_tokens', null),
           ('trains_nothing', null),
           ('kept_message_trains_nothing', 'no view names keep_msgs with message spans')
),
summary as (
    select s.*, n.cause
    from sft_contract_summary_v1 as s
    left join names as n using (check_name)
),
per_pool as (
    select
        'contract_' || check_name as check_name,
        'sft' as area,
        'error' as severity,
        'pool=' || pool as scope,
        (views - not_checked)::bigint as tested,
        failed::bigint as failing,
        'failing > 0' as error_if,
        null::varchar as warn_if,
        case
            when views = not_checked then coalesce(cause, 'the check could not be made on any view')
            when not_checked > 0 then format('{} of {} views not checked: {}', not_checked, views,
                                             coalesce(cause, 'the check could not be made'))
        end as reason,
        null::varchar as detail,
        format('select * from sft_contract_failures_v1 where pool = ''{}'' and check_name = ''{}''',
               replace(pool, '''', ''''''), check_name) as drill_down
    from summary
),
absent as (
    select
        'contract_' || check_name as check_name, 'sft' as area, 'error' as severity, 'corpus' as scope,
        null::bigint as tested, null::bigint as failing, 'failing > 0' as error_if, null::varchar as warn_if,
        'no SFT views loaded (load views FILE)' as reason, null::varchar as detail, null::varchar as drill_down
    from names
    where not exists (select 1 from sft_views)
)
select * from per_pool
union all
select * from absent
