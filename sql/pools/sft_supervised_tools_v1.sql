-- sft_supervised_tools_v1: tool calls in supervised assistant messages, by tool (SPEC §3.4).
-- A call is supervised when its assistant message is kept for loss by at least one view
-- of a training pool (any pool not marked report-only; keep_msgs null = every assistant
-- message). Each call counts once. Tools map through tool_aliases; others are 'other'.
-- Grain: one row per canonical tool. Columns: calls; share (of all supervised calls);
--   bash_share (the bash row's share, repeated for convenience).
with training as (
    select v.instance_id, v.keep_msgs from sft_views as v
    left join sft_pool_roles as p on p.pool = v.pool
    where p.role is null or p.role <> 'report'
),
supervised as (
    select distinct c.instance_id, c.msg_index, c.call_index, coalesce(a.canonical, 'other') as tool
    from sft_tool_calls as c
    join sft_messages as m on m.instance_id = c.instance_id and m.msg_index = c.msg_index and m.role = 'assistant'
    join training as t on t.instance_id = c.instance_id and (t.keep_msgs is null or list_contains(t.keep_msgs, c.msg_index))
    left join tool_aliases as a on a.tool = c.name
),
counted as (
    select tool, count(*) as calls from supervised group by tool
)
select
    tool,
    calls,
    calls / sum(calls) over () as share,
    sum(calls) filter (where tool = 'bash') over () / sum(calls) over () as bash_share
from counted
