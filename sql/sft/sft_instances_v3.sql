-- sft_instances_v3: one row per SWE-bench instance, whatever number of trajectories it has
-- (issue 27: several attempts of one instance are kept, sft_attempts_v1). sft_instances_v2
-- took each attempt after the first ('<instance>#<n>') for an instance of its own, and read
-- the trajectory columns of the first attempt only.
-- Grain key: instance_id.
-- Grain: instance_id = the instance (every instance with a trajectory or a view; a view
--   whose instance_id is an attempt's key, as `views build` writes it, counts under that
--   attempt's instance).
-- Columns: those of sft_instances_v2, each over all the instance's attempts:
--   source (trajectory formats, sorted and comma-separated when attempts come from several;
--   null without a trajectory); pools, views, report_only_views, tokens (its longest view),
--   supervised_tokens, report_only_supervised_tokens: over the views of every attempt;
--   assistant_messages (summed over the attempts' trajectories, else its views' spans per
--   view instance_id), assistant_messages_kept (distinct (attempt, message) pairs with a
--   supervised token in a training view), assistant_messages_masked (the difference);
--   tool_calls_* (every tool call of every attempt, by class);
--   resolved: the evaluator report's verdict (null for an infra failure), else, without a
--     report, whether some attempt's own flag says resolved (null when none says);
--   resolved_by, fail_to_pass, pass_to_pass_passed, outcome, infra_failure_reason: as v2
--     (the report is the instance's);
--   and trajectories (attempts loaded; 0 without a trajectory); resolved_trajectories,
--   unresolved_trajectories (attempts whose verdict in sft_attempts_v1 is true / false).
with view_instances as (
    select v.view_id, v.pool, v.n_ids, v.family, v.instance_id as view_instance,
           coalesce(t.instance, v.instance_id) as instance_id
    from sft_views as v
    left join sft_trajectories as t on t.instance_id = v.instance_id
),
ids as (
    select instance as instance_id from sft_trajectories
    union
    select instance_id from view_instances
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
    from view_instances as v
    left join report_only as r using (view_id)
    left join supervised as s using (view_id)
    group by v.instance_id
),
kept as (
    -- distinct (attempt, assistant message) with a supervised token in some training view
    select distinct v.instance_id, v.view_instance, s.msg_index
    from sft_training_views_v1 as t
    join view_instances as v on v.view_id = t.view_id
    join sft_view_spans as s on s.view_id = t.view_id and s.role = 'assistant'
    where exists (select 1 from sft_view_runs as r
                  where r.view_id = s.view_id and r.run_start < s.end_pos and r.run_end > s.start_pos)
),
kept_counts as (
    select instance_id, count(*) as kept from kept group by instance_id
),
trajectories as (
    select a.instance as instance_id,
           array_to_string(list_sort(list(distinct a.source)), ',') as source,
           any_value(a.family) as family,
           count(*) as trajectories,
           count(*) filter (where a.resolved) as resolved_trajectories,
           count(*) filter (where not a.resolved) as unresolved_trajectories,
           bool_or(t.declared_resolved) as declared_resolved
    from sft_attempts_v1 as a
    join sft_trajectories as t using (instance_id)
    group by a.instance
),
assistant as (
    select t.instance as instance_id, count(*) as assistant_messages
    from sft_messages as m join sft_trajectories as t using (instance_id)
    where m.role = 'assistant'
    group by t.instance
),
span_assistant as (
    -- instances without a trajectory: assistant messages named by their views' spans
    select instance_id, sum(n) as assistant_messages from (
        select v.instance_id, count(distinct s.msg_index) as n
        from view_instances as v join sft_view_spans as s on s.view_id = v.view_id and s.role = 'assistant'
        group by v.instance_id, v.view_instance
    ) group by instance_id
),
tools as (
    select t.instance as instance_id,
           count(*) filter (where c.tool = 'bash') as bash,
           count(*) filter (where c.tool = 'read') as read,
           count(*) filter (where c.tool = 'edit') as edit,
           count(*) filter (where c.tool = 'search') as search,
           count(*) filter (where c.tool = 'submit') as submit,
           count(*) filter (where c.tool = 'other') as other
    from sft_tool_call_classes_v1 as c join sft_trajectories as t using (instance_id)
    group by t.instance
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
        coalesce(k.kept, 0) as assistant_messages_kept,
        coalesce(tl.bash, 0) as tool_calls_bash,
        coalesce(tl.read, 0) as tool_calls_read,
        coalesce(tl.edit, 0) as tool_calls_edit,
        coalesce(tl.search, 0) as tool_calls_search,
        coalesce(tl.submit, 0) as tool_calls_submit,
        coalesce(tl.other, 0) as tool_calls_other,
        case when o.infra_failure then null else coalesce(o.resolved, t.declared_resolved) end as resolved,
        case
            when o.instance_id is not null then 'evaluator report'
            when t.declared_resolved is not null then 'trajectory'
        end as resolved_by,
        o.fail_to_pass_success + o.fail_to_pass_failure as fail_to_pass,
        o.pass_to_pass_success as pass_to_pass_passed,
        case
            when o.instance_id is null then null
            when o.infra_failure then 'infra failure'
            when o.empty_patch then 'empty patch'
            when o.fail_to_pass_success is null then 'not graded'
            when o.resolved then 'resolved'
            else 'unresolved'
        end as outcome,
        o.infra_failure_reason,
        coalesce(t.trajectories, 0) as trajectories,
        coalesce(t.resolved_trajectories, 0) as resolved_trajectories,
        coalesce(t.unresolved_trajectories, 0) as unresolved_trajectories
    from ids as i
    left join trajectories as t using (instance_id)
    left join views as v using (instance_id)
    left join assistant as a using (instance_id)
    left join span_assistant as sa using (instance_id)
    left join kept_counts as k using (instance_id)
    left join tools as tl using (instance_id)
    left join sft_outcomes as o using (instance_id)
)
select
    instance_id, family, source, pools, views, report_only_views, tokens, supervised_tokens,
    report_only_supervised_tokens, assistant_messages, assistant_messages_kept,
    assistant_messages - assistant_messages_kept as assistant_messages_masked,
    tool_calls_bash, tool_calls_read, tool_calls_edit, tool_calls_search, tool_calls_submit, tool_calls_other,
    resolved, resolved_by, fail_to_pass, pass_to_pass_passed, outcome, infra_failure_reason,
    trajectories, resolved_trajectories, unresolved_trajectories
from counted
