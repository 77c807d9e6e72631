-- sft_final_report_v1: is each trajectory's final report (its last assistant message)
-- supervised, masked or absent from training (SPEC §3.4 outcome).
-- Grain key: instance_id.
-- Grain: instance_id (one row per trajectory with an assistant message).
-- Scope: training views (sft_training_views_v1); report-only views are named apart.
-- Columns: final_message (its message index); status:
--   'supervised'  a training view's span of the message holds a supervised token;
--   'masked'      training views of the instance exist, none supervises it;
--   'report-only' no training view of the instance; a report-only view supervises it;
--   'absent'      no training view of the instance and no report-only view supervises it.
with last as (
    select instance_id, max(msg_index) as msg_index from sft_messages where role = 'assistant' group by instance_id
),
supervising as (
    -- views of each instance whose span of its final message holds a supervised token
    select distinct v.instance_id, t.view_id is not null as training
    from sft_views as v
    join last as l using (instance_id)
    left join sft_training_views_v1 as t using (view_id)
    join sft_view_spans as s on s.view_id = v.view_id and s.msg_index = l.msg_index
    join sft_view_runs as r on r.view_id = v.view_id and r.run_start < s.end_pos and r.run_end > s.start_pos
)
select
    l.instance_id,
    l.msg_index as final_message,
    case
        when exists (select 1 from supervising as s where s.instance_id = l.instance_id and s.training) then 'supervised'
        when exists (select 1 from sft_training_views_v1 as t where t.instance_id = l.instance_id) then 'masked'
        when exists (select 1 from supervising as s where s.instance_id = l.instance_id) then 'report-only'
        else 'absent'
    end as status
from last as l
