-- sft_supervised_tools_v1: tool calls by class, supervised and all (SPEC §3.4).
-- Classes come from sft_tool_call_classes_v1 (bash = the calls stored as shell commands,
-- so `calls` of the bash row equals the bash_commands of `report trajectories`;
-- multiplexed editor tools by their `command` argument).
-- Scopes: calls / share = every loaded tool call; supervised_calls / supervised_share =
--   calls in assistant messages kept for loss by at least one training view
--   (sft_training_views_v1: report-only pools excluded; keep_msgs null = every assistant
--   message), each call counted once however many views keep it.
-- Grain key: tool.
-- Grain: tool. Columns: tool; calls; share (of all calls); supervised_calls;
--   supervised_share (of all supervised calls); bash_share (the bash row's
--   supervised_share, repeated on every row, SPEC §3.4 "share that are bash").
with classes as (
    select * from sft_tool_call_classes_v1
),
supervised as (
    select distinct c.instance_id, c.msg_index, c.call_index, c.tool
    from classes as c
    join sft_messages as m on m.instance_id = c.instance_id and m.msg_index = c.msg_index and m.role = 'assistant'
    join sft_training_views_v1 as t
        on t.instance_id = c.instance_id and (t.keep_msgs is null or list_contains(t.keep_msgs, c.msg_index))
),
everything as (
    select tool, count(*) as calls from classes group by tool
),
kept as (
    select tool, count(*) as supervised_calls from supervised group by tool
),
counted as (
    select e.tool, e.calls, coalesce(k.supervised_calls, 0) as supervised_calls
    from everything as e left join kept as k using (tool)
)
select
    tool,
    calls,
    calls / sum(calls) over () as share,
    supervised_calls,
    case when sum(supervised_calls) over () > 0 then supervised_calls / sum(supervised_calls) over () end as supervised_share,
    case when sum(supervised_calls) over () > 0
        then coalesce(sum(supervised_calls) filter (where tool = 'bash') over (), 0) / sum(supervised_calls) over () end as bash_share
from counted
