-- sft_instances_v1: one row per source instance (issue 4 item 5), each column with one
-- stated scope (issue 9 "one scope per figure").
-- Grain key: instance_id.
-- Grain: instance_id (every instance that has a trajectory or a view).
-- Columns:
--   instance_id; family; source (trajectory format, null without a trajectory);
--   pools (sorted pools with a view of it, report-only pools included); views (all its
--   views); report_only_views (of those, views of report-only pools); tokens (its longest
--   view, any pool: the context length of sft_context_lengths_v1);
--   supervised_tokens (training scope: supervised positions summed over its training
--   views, sft_training_views_v1 — its exposure; null without a training view);
--   report_only_supervised_tokens (the same over its report-only views; null without one);
--   assistant_messages (assistant messages of the trajectory, else of its views' spans);
--   assistant_messages_kept (distinct assistant messages holding a supervised token in at
--   least one training view) and assistant_messages_masked (assistant_messages minus
--   kept): kept + masked = assistant_messages;
--   tool_calls_bash / _read / _edit / _search / _submit / _other (every tool call of the
--   trajectory, by class, sft_tool_call_classes_v1);
--   resolved (the evaluator report's verdict, else the trajectory's own flag, as
--   sft_trajectory_stats_v1 counts it; null when neither says); resolved_by
--   ('evaluator report' | 'trajectory' | null);
--   fail_to_pass (success + failure nodes), pass_to_pass_passed (from the evaluator
--   report; null without one, and null when the report graded no test);
--   outcome ('resolved' | 'unresolved' | 'not graded': the report has no test results,
--   the patch was None or did not apply | null: no report).
with ids as (
    select instance_id from sft_trajectories
    union
    select instance_id from sft_views
),
report_only as (
    select v.view_id from sft_views as v join sft_pool_roles as p on p.pool = v.pool and p.role = 'report'
),
supervised as (
    select view_id, sum(run_end - run_start)::bigint as supervised from sft_view_runs group by view_id
),
views as (
    select v.instance_id,
           list_sort(list_distinct(list(v.pool))) as pools,
           count(*) as views,
           count(r.view_id) as report_only_views,
           max(v.n_ids) as tokens,
           sum(coalesce(s.supervised, 0)) filter (where r.view_id is null)::bigint as supervised_tokens,
           sum(coalesce(s.supervised, 0)) filter (where r.view_id is not null)::bigint as report_only_supervised_tokens,
           any_value(v.family) as family
    from sft_views as v
    left join report_only as r using (view_id)
    left join supervised as s using (view_id)
    group by v.instance_id
),
kept as (
    -- distinct assistant messages with a supervised token in some training view
    select distinct t.instance_id, s.msg_index
    from sft_training_views_v1 as t
    join sft_view_spans as s on s.view_id = t.view_id and s.role = 'assistant'
    where exists (select 1 from sft_view_runs as r
                  where r.view_id = s.view_id and r.run_start < s.end_pos and r.run_end > s.start_pos)
),
assistant as (
    select instance_id, count(*) as assistant_messages
    from sft_messages
    where role = 'assistant'
    group by instance_id
),
span_assistant as (
    -- instances without a trajectory: assistant messages named by their views' spans
    select v.instance_id, count(distinct s.msg_index) as assistant_messages
    from sft_views as v join sft_view_spans as s on s.view_id = v.view_id and s.role = 'assistant'
    group by v.instance_id
),
tools as (
    select instance_id,
           count(*) filter (where tool = 'bash') as bash,
           count(*) filter (where tool = 'read') as read,
           count(*) filter (where tool = 'edit') as edit,
           count(*) filter (where tool = 'search') as search,
           count(*) filter (where tool = 'submit') as submit,
           count(*) filter (where tool = 'other') as other
    from sft_tool_call_classes_v1
    group by instance_id
),
counted as (
    select
        i.instance_id,
        coalesce(t.family, v.family) as family,
        t.source,
        v.pools,
        coalesce(v.views, 0) as views,
        coalesce(v.report_only_views, 0) as report_only_views,
        v.tokens,
        v.supervised_tokens,
        v.report_only_supervised_tokens,
        case when t.instance_id is not null then coalesce(a.assistant_messages, 0) else sa.assistant_messages end
            as assistant_messages,
        (select count(*) from kept as k where k.instance_id = i.instance_id) as assistant_messages_kept,
        coalesce(tl.bash, 0) as tool_calls_bash,
        coalesce(tl.read, 0) as tool_calls_read,
        coalesce(tl.edit, 0) as tool_calls_edit,
        coalesce(tl.search, 0) as tool_calls_search,
        coalesce(tl.submit, 0) as tool_calls_submit,
        coalesce(tl.other, 0) as tool_calls_other,
        coalesce(o.resolved, t.declared_resolved) as resolved,
        case
            when o.instance_id is not null then 'evaluator report'
            when t.declared_resolved is not null then 'trajectory'
        end as resolved_by,
        o.fail_to_pass_success + o.fail_to_pass_failure as fail_to_pass,
        o.pass_to_pass_success as pass_to_pass_passed,
        case
            when o.instance_id is null then null
            when o.fail_to_pass_success is null then 'not graded'
            when o.resolved then 'resolved'
            else 'unresolved'
        end as outcome
    from ids as i
    left join sft_trajectories as t using (instance_id)
    left join views as v using (instance_id)
    left join assistant as a using (instance_id)
    left join span_assistant as sa using (instance_id)
    left join tools as tl using (instance_id)
    left join sft_outcomes as o using (instance_id)
)
select
    instance_id, family, source, pools, views, report_only_views, tokens, supervised_tokens,
    report_only_supervised_tokens, assistant_messages, assistant_messages_kept,
    assistant_messages - assistant_messages_kept as assistant_messages_masked,
    tool_calls_bash, tool_calls_read, tool_calls_edit, tool_calls_search, tool_calls_submit, tool_calls_other,
    resolved, resolved_by, fail_to_pass, pass_to_pass_passed, outcome
from counted
