-- sft_trajectory_stats_v1: what the loaded trajectories hold, per source format.
-- Grain key: source.
-- Grain: one row per source. Columns: trajectories; resolved (resolved by the loaded
--   evaluator outcome, else by the source's own flag); messages; assistant_messages; tool_calls (all, structured or parsed from
--   text); bash_commands (shell commands run by assistant messages); git_history_commands
--   (of those: git log / show / blame / rev-list / reflog, SPEC §3.4); instances_with_git_history.
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
           count(distinct c.instance_id) filter (where c.git_history) as instances_with_git_history
    from sft_commands as c join t using (instance_id)
    group by t.source
),
outcomes as (
    select t.source, count(*) filter (where coalesce(o.resolved, t.declared_resolved)) as resolved
    from t left join sft_outcomes as o using (instance_id)
    group by t.source
)
select
    t.source,
    count(*) as trajectories,
    coalesce(any_value(o.resolved), 0) as resolved,
    coalesce(any_value(m.messages), 0) as messages,
    coalesce(any_value(m.assistant_messages), 0) as assistant_messages,
    coalesce(any_value(c.tool_calls), 0) as tool_calls,
    coalesce(any_value(b.bash_commands), 0) as bash_commands,
    coalesce(any_value(b.git_history_commands), 0) as git_history_commands,
    coalesce(any_value(b.instances_with_git_history), 0) as instances_with_git_history
from t
left join messages as m using (source)
left join calls as c using (source)
left join commands as b using (source)
left join outcomes as o using (source)
group by t.source
