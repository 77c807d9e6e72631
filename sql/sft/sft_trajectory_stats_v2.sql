-- sft_trajectory_stats_v2: what the loaded trajectories hold, per source format, with
-- trajectories and instances told apart (issue 27: several attempts of one instance are
-- kept, sft_attempts_v1). sft_trajectory_stats_v1 counted an instance's attempts as
-- instances in instances_with_git_history, and gave the instance's evaluator report to its
-- first attempt only.
-- Grain key: source.
-- Grain: one row per source.
-- Columns: trajectories (every attempt); instances (distinct instances among them);
--   resolved (trajectories whose verdict in sft_attempts_v1 is resolved: the report's with
--   one attempt, else the trajectory's own flag); resolved_instances (instances whose report
--   says resolved, else, without a report, with a resolved trajectory of this source; an
--   infra failure is not resolved); messages; assistant_messages; tool_calls (all,
--   structured or parsed from text); bash_commands (shell commands run by assistant
--   messages); git_history_commands (of those: git log / show / blame / rev-list / reflog,
--   SPEC §3.4); trajectories_with_git_history; instances_with_git_history (distinct
--   instances).
with t as (
    select * from sft_trajectories
),
messages as (
    select t.source, count(*) as messages, count(*) filter (where m.role = 'assistant') as assistant_messages
    from sft_messages as m join t using (instance_id)
    group by t.source
),
calls as (
    select t.source, count(*) as tool_calls
    from sft_tool_calls as c join t using (instance_id)
    group by t.source
),
commands as (
    select t.source,
           count(*) as bash_commands,
           count(*) filter (where c.git_history) as git_history_commands,
           count(distinct c.instance_id) filter (where c.git_history) as trajectories_with_git_history,
           count(distinct t.instance) filter (where c.git_history) as instances_with_git_history
    from sft_commands as c join t using (instance_id)
    group by t.source
),
instances as (
    select a.source, a.instance,
           bool_or(a.resolved) as some_resolved,
           any_value(o.resolved) as report_resolved,
           any_value(o.infra_failure) as infra_failure,
           count(o.instance_id) > 0 as reported
    from sft_attempts_v1 as a
    left join sft_outcomes as o on o.instance_id = a.instance
    group by a.source, a.instance
),
outcomes as (
    select i.source,
           count(*) as instances,
           count(*) filter (where case when i.reported then i.report_resolved and not coalesce(i.infra_failure, false)
                                       else i.some_resolved end) as resolved_instances
    from instances as i
    group by i.source
),
resolved as (
    select source, count(*) filter (where resolved) as resolved from sft_attempts_v1 group by source
)
select
    t.source,
    count(*) as trajectories,
    coalesce(any_value(u.instances), 0) as instances,
    coalesce(any_value(r.resolved), 0) as resolved,
    coalesce(any_value(u.resolved_instances), 0) as resolved_instances,
    coalesce(any_value(m.messages), 0) as messages,
    coalesce(any_value(m.assistant_messages), 0) as assistant_messages,
    coalesce(any_value(c.tool_calls), 0) as tool_calls,
    coalesce(any_value(b.bash_commands), 0) as bash_commands,
    coalesce(any_value(b.git_history_commands), 0) as git_history_commands,
    coalesce(any_value(b.trajectories_with_git_history), 0) as trajectories_with_git_history,
    coalesce(any_value(b.instances_with_git_history), 0) as instances_with_git_history
from t
left join messages as m using (source)
left join calls as c using (source)
left join commands as b using (source)
left join outcomes as u using (source)
left join resolved as r using (source)
group by t.source
