-- check_sft_truncation_at_v1(max_length, side): what truncation at the training length
-- does to the training views, as checks (issue 26; SPEC §3.4 truncation survival), read
-- from sft_truncation_views_at_v1.
-- Parameters: max_length INTEGER (tokens, >= 1); side VARCHAR ('right' or 'left').
--   check_findings_v1 calls it at 32,768 and 'right'; `sphragis check` at [sft] max_length
--   and side of checks.toml.
-- Grain key: check_name, scope.
-- Grain: one row per (check, pool with training views); with no training view, one row
--   per check with scope 'corpus', not run.
-- Checks:
--   trains_nothing_after_truncation (error; failing > 0): training views that supervise
--     something but nothing inside the window truncation keeps (they train at zero loss),
--     of the pool's training views;
--   final_report_lost_after_truncation (warn; failing > 0): training views whose last
--     assistant message is supervised and not wholly inside the window, of the pool's
--     training views.
-- Columns: the check columns (check_findings_at_v1); scope names the pool, the length and
--   the side ('pool=A max_length=32768 side=right').
create or replace macro check_sft_truncation_at_v1(max_length integer, side varchar) as table
with training as (
    select pool, count(*) as views from sft_training_views_v1 group by pool
),
cut as (
    select pool,
           count(*) filter (where all_masked_after) as all_masked,
           count(*) filter (where final_report_lost) as final_lost
    from sft_truncation_views_at_v1([max_length], side)
    where view_id in (select view_id from sft_training_views_v1)
    group by pool
),
per_pool as (
    select t.pool, t.views, coalesce(c.all_masked, 0) as all_masked, coalesce(c.final_lost, 0) as final_lost,
           format('pool={} max_length={} side={}', t.pool, max_length, side) as scope,
           replace(t.pool, '''', '''''') as q
    from training as t left join cut as c using (pool)
),
checks as (
    select 'trains_nothing_after_truncation' as check_name, 'error' as severity, scope,
           views::bigint as tested, all_masked::bigint as failing, 'failing > 0' as error_if, null::varchar as warn_if,
           format('select * from sft_truncation_views_at_v1([{}], ''{}'') where pool = ''{}'' and all_masked_after',
                  max_length, side, q) as drill_down
    from per_pool
    union all
    select 'final_report_lost_after_truncation', 'warn', scope, views::bigint, final_lost::bigint, null, 'failing > 0',
           format('select * from sft_truncation_views_at_v1([{}], ''{}'') where pool = ''{}'' and final_report_lost',
                  max_length, side, q)
    from per_pool
),
absent as (
    select name, severity, 'corpus', null::bigint, null::bigint, error_if, warn_if, null::varchar
    from (values ('trains_nothing_after_truncation', 'error', 'failing > 0', null),
                 ('final_report_lost_after_truncation', 'warn', null, 'failing > 0')) as c(name, severity, error_if, warn_if)
    where not exists (select 1 from sft_training_views_v1)
)
select check_name, 'sft' as area, severity, scope, tested, failing, error_if, warn_if,
       case when tested is null then 'no training views loaded (load views FILE)' end as reason,
       format('at {} tokens, {} truncation', max_length, side) as detail,
       drill_down
from (select * from checks union all select * from absent)
