-- check_sft_packs_v1: packed training rows (issue 27) as checks, one row per check and
-- pool, read from sft_packs_v1.
--   pack_attention_crosses (error; failing > 0): rows whose message spans restart at index
--     0 with no packing metadata (seq_lengths, cu_seqlens, position_ids, attention_mask
--     segment ids): packed without a boundary, each conversation attended to the ones before
--     it; of the pool's rows with message spans (not run: none has spans).
--   pack_instances_unattributed (error; failing > 0): packed rows naming fewer instance ids
--     than conversations (a string instance_id names the first only): dedup, exposure and
--     isolation count the others under the first's instance; of the pool's packed rows (not
--     run: no packed row).
--   pack_boundaries_off_turns (warn; failing > 0): packed rows whose spans restart where no
--     conversation starts, run past their conversation or start outside every conversation,
--     whose later conversation opens with a message other than 0 (a boundary inside a
--     conversation), or whose position_ids jump; of the packed rows (cut at boundaries: two
--     or more conversations, or padding).
--   pack_padding_supervised (error; failing > 0): packed rows that supervise padding (a
--     position in no conversation); of the packed rows.
--   pack_supervision_crosses (error; failing > 0): packed rows supervising the first
--     position of a later conversation, whose target is scored from the last position of
--     the conversation before (HF's DataCollatorWithFlattening masks it); of the packed rows.
--   pack_ledger (error; failing > 0): packed rows whose claimed n_tokens / n_supervised
--     are not the row's; of the packed rows that claim them (not run: none does).
-- Grain key: check_name, scope.
-- Grain: one row per (check, pool); with no SFT view loaded, one row per check with scope
--   'corpus', not run.
-- Columns: the check columns (check_findings_at_v1).
with names(check_name, severity) as (
    values ('pack_attention_crosses', 'error'),
           ('pack_instances_unattributed', 'error'),
           ('pack_boundaries_off_turns', 'warn'),
           ('pack_padding_supervised', 'error'),
           ('pack_supervision_crosses', 'error'),
           ('pack_ledger', 'error')
),
pools as (
    select distinct pool from sft_views
),
rows_with_spans as (
    select v.pool, count(distinct coalesce(u.pack_id, v.view_id)) as rows_with_spans
    from sft_views as v
    left join sft_view_pack_units as u using (view_id)
    where exists (select 1 from sft_view_spans as s where s.view_id = v.view_id)
    group by v.pool
),
packs as (
    select pool,
           count(*) filter (where attention_crosses) as attention_crosses,
           count(*) filter (where cut) as packed,
           count(*) filter (where cut and instances_unattributed) as unattributed,
           count(*) filter (where cut and off_turns) as off_turns,
           count(*) filter (where cut and padding_supervised > 0) as padding_supervised,
           count(*) filter (where cut and first_supervised > 0) as first_supervised,
           count(*) filter (where cut and ledger_differs is not null) as claimed,
           count(*) filter (where cut and ledger_differs) as ledger_differs
    from sft_packs_v1
    group by pool
),
figures as (
    select p.pool, replace(p.pool, '''', '''''') as q,
           coalesce(s.rows_with_spans, 0) as rows_with_spans,
           coalesce(k.attention_crosses, 0) as attention_crosses,
           coalesce(k.packed, 0) as packed,
           coalesce(k.unattributed, 0) as unattributed,
           coalesce(k.off_turns, 0) as off_turns,
           coalesce(k.padding_supervised, 0) as padding_supervised,
           coalesce(k.first_supervised, 0) as first_supervised,
           coalesce(k.claimed, 0) as claimed,
           coalesce(k.ledger_differs, 0) as ledger_differs
    from pools as p
    left join rows_with_spans as s using (pool)
    left join packs as k using (pool)
),
per_pool as (
    select n.check_name, 'sft' as area, n.severity, 'pool=' || f.pool as scope,
           case n.check_name
               when 'pack_attention_crosses' then f.rows_with_spans
               when 'pack_ledger' then f.claimed
               else f.packed
           end::bigint as tested,
           case n.check_name
               when 'pack_attention_crosses' then f.attention_crosses
               when 'pack_instances_unattributed' then f.unattributed
               when 'pack_boundaries_off_turns' then f.off_turns
               when 'pack_padding_supervised' then f.padding_supervised
               when 'pack_supervision_crosses' then f.first_supervised
               when 'pack_ledger' then f.ledger_differs
           end::bigint as failing,
           f.q
    from names as n cross join figures as f
)
select
    check_name, area, severity, scope, tested, failing,
    case when severity = 'error' then 'failing > 0' end as error_if,
    case when severity = 'warn' then 'failing > 0' end as warn_if,
    case when tested = 0 then
        case check_name
            when 'pack_attention_crosses'
                then 'the views have no message spans: a pack without metadata shows only as spans restarting at index 0'
            when 'pack_ledger' then 'no packed row claims ledger counts'
            else 'no row packs conversations (seq_lengths, cu_seqlens, position_ids or attention_mask segment ids)'
        end
    end as reason,
    null::varchar as detail,
    format('select * from sft_packs_v1 where pool = ''{}'' and {}', q,
           case check_name
               when 'pack_attention_crosses' then 'attention_crosses'
               when 'pack_instances_unattributed' then 'cut and instances_unattributed'
               when 'pack_boundaries_off_turns' then 'cut and off_turns'
               when 'pack_padding_supervised' then 'cut and padding_supervised > 0'
               when 'pack_supervision_crosses' then 'cut and first_supervised > 0'
               when 'pack_ledger' then 'cut and ledger_differs'
           end) as drill_down
from per_pool
union all
select check_name, 'sft', severity, 'corpus', null::bigint, null::bigint,
       case when severity = 'error' then 'failing > 0' end,
       case when severity = 'warn' then 'failing > 0' end,
       'no SFT views loaded (load views FILE)', null::varchar, null::varchar
from names
where not exists (select 1 from sft_views)
