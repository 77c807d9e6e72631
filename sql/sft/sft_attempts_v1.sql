-- sft_attempts_v1: every loaded trajectory as an attempt at its SWE-bench instance (issue 27:
-- SWE-smith, nebius and SWE-Gym publish several trajectories of one instance, failed ones
-- included; each is kept, src/sft/attempts.rs).
-- Grain key: instance_id.
-- Grain: one row per trajectory (sft_trajectories).
-- Columns: instance_id (the trajectory's key: the instance for attempt 0,
--   '<instance>#<attempt>' after); instance; attempt (0-based, in order of loading);
--   attempts (trajectories of the instance); source; family; messages;
--   resolved: the trajectory's verdict. With one attempt, the evaluator report's verdict
--     (null for an infra failure), else the trajectory's own flag, as sft_instances_v2 reads
--     it; with several attempts, the trajectory's own flag only: a report.json grades one
--     prediction of the instance and does not say which attempt it was (sft_instances_v3
--     keeps it at the instance);
--   resolved_by ('evaluator report' | 'trajectory' | null);
--   identical_to: the key of the first earlier attempt of the same instance whose messages
--     are the same (role, text, thinking text, tool calls by name and arguments), null when
--     none: such an attempt's tokens count twice in exposure.
with t as (
    select t.*, count(*) over (partition by t.instance) as attempts
    from sft_trajectories as t
),
call_counts as (
    select instance_id, count(*) as calls from sft_tool_calls group by instance_id
),
candidates as (
    -- pairs (later, earlier) of one instance with as many messages and tool calls
    select a.instance_id as later, b.instance_id as earlier, b.attempt as earlier_attempt
    from t as a
    join t as b on b.instance = a.instance and b.attempt < a.attempt and b.n_messages = a.n_messages
    left join call_counts as ca on ca.instance_id = a.instance_id
    left join call_counts as cb on cb.instance_id = b.instance_id
    where coalesce(ca.calls, 0) = coalesce(cb.calls, 0)
),
messages_differ as (
    select distinct c.later, c.earlier
    from candidates as c
    join sft_messages as x on x.instance_id = c.later
    join sft_messages as y on y.instance_id = c.earlier and y.msg_index = x.msg_index
    where x.role <> y.role or x.text <> y.text or x.reasoning is distinct from y.reasoning
),
calls_differ as (
    select distinct c.later, c.earlier
    from candidates as c
    join sft_tool_calls as x on x.instance_id = c.later
    left join sft_tool_calls as y
        on y.instance_id = c.earlier and y.msg_index = x.msg_index and y.call_index = x.call_index
    where y.instance_id is null or x.name <> y.name or x.arguments <> y.arguments
),
identical as (
    select c.later, min(c.earlier_attempt) as earlier_attempt
    from candidates as c
    left join messages_differ as m on m.later = c.later and m.earlier = c.earlier
    left join calls_differ as k on k.later = c.later and k.earlier = c.earlier
    where m.later is null and k.later is null
    group by c.later
)
select
    t.instance_id,
    t.instance,
    t.attempt,
    t.attempts,
    t.source,
    t.family,
    t.n_messages as messages,
    case
        when t.attempts = 1 and o.instance_id is not null then (case when o.infra_failure then null else o.resolved end)
        else t.declared_resolved
    end as resolved,
    case
        when t.attempts = 1 and o.instance_id is not null then 'evaluator report'
        when t.declared_resolved is not null then 'trajectory'
    end as resolved_by,
    e.instance_id as identical_to
from t
left join sft_outcomes as o on o.instance_id = t.instance
left join identical as i on i.later = t.instance_id
left join t as e on e.instance = t.instance and e.attempt = i.earlier_attempt
