-- sft_final_report_v1: is each trajectory's final report (its last assistant message)
-- supervised, masked or absent from training (SPEC §3.4 outcome).
-- Grain: one row per trajectory. status: 'supervised' (a training view keeps the
-- message and its span holds supervised tokens), 'masked' (training views exist but
-- none supervises it), 'absent' (no training view of the instance). Training views are
-- those of any pool not marked report-only.
with last as (
    select instance_id, max(msg_index) as msg_index from sft_messages where role = 'assistant' group by instance_id
),
training as (
    select v.view_id, v.instance_id from sft_views as v
    left join sft_pool_roles as p on p.pool = v.pool
    where p.role is null or p.role <> 'report'
),
supervised as (
    select distinct t.instance_id
    from training as t
    join last as l using (instance_id)
    join sft_view_spans as s on s.view_id = t.view_id and s.msg_index = l.msg_index
    join sft_view_runs as r on r.view_id = t.view_id and r.run_start < s.end_pos and r.run_end > s.start_pos
)
select
    l.instance_id,
    l.msg_index as final_message,
    case
        when su.instance_id is not null then 'supervised'
        when exists (select 1 from training as t where t.instance_id = l.instance_id) then 'masked'
        else 'absent'
    end as status
from last as l
left join supervised as su using (instance_id)
