-- sft_packs_v1: packed training rows (issue 27), one row each, with what their metadata
-- and spans say and the figures recomputed from the views cut from them.
-- A row that packs conversations (seq_lengths, cu_seqlens, position_ids restarting at 0,
-- attention_mask segment ids) is loaded as one view per conversation ('<pack_id>#<index>',
-- sft_view_pack_units); a row with no such metadata whose message spans restart at index 0 is
-- kept whole and listed here with boundary_source null.
-- Grain key: pack_id.
-- Grain: one row per sft_view_packs row. Columns: pack_id; pool; boundary_source; n_units;
--   n_positions; n_padding; padding_supervised; instances_declared; distinct_instances
--   (instances the row's views carry); span_restarts; spans_crossing; spans_unplaced;
--   position_jumps; supervised (supervised positions of the row: its views' plus supervised
--   padding); claimed_tokens; claimed_supervised (the row's ledger); attention_crosses
--   (spans restart with no boundary given: the conversations attended to each other);
--   instances_unattributed (fewer instance ids than conversations: every conversation is
--   counted under the first's instance); off_turns (a span restarts where no conversation
--   starts, runs past its conversation, starts in padding, or position_ids jump);
--   ledger_differs (the claimed counts are not the row's; null without a claim).
with views as (
    select coalesce(u.pack_id, v.view_id) as pack_id, v.pool, v.instance_id,
           coalesce((select sum(r.run_end - r.run_start) from sft_view_runs as r where r.view_id = v.view_id), 0)
               as supervised
    from sft_views as v
    left join sft_view_pack_units as u using (view_id)
    where u.view_id is not null or v.view_id in (select pack_id from sft_view_packs)
),
per_pack as (
    select pack_id, any_value(pool) as pool, count(distinct instance_id) as distinct_instances,
           sum(supervised) as supervised
    from views
    group by pack_id
)
select
    p.pack_id,
    v.pool,
    p.boundary_source,
    p.n_units,
    p.n_positions,
    p.n_padding,
    p.padding_supervised,
    p.instances_declared,
    v.distinct_instances,
    p.span_restarts,
    p.spans_crossing,
    p.spans_unplaced,
    p.position_jumps,
    -- a row kept whole holds its padding in its one view
    (v.supervised + case when p.n_units > 1 then p.padding_supervised else 0 end)::bigint as supervised,
    p.claimed_tokens,
    p.claimed_supervised,
    p.boundary_source is null and p.span_restarts > 0 as attention_crosses,
    p.instances_declared < p.n_units as instances_unattributed,
    p.boundary_source is not null
        and (p.span_restarts + p.spans_crossing + p.spans_unplaced + p.position_jumps) > 0 as off_turns,
    case when p.claimed_tokens is not null or p.claimed_supervised is not null
         then coalesce(p.claimed_tokens <> p.n_positions, false)
              or coalesce(p.claimed_supervised <> v.supervised
                              + case when p.n_units > 1 then p.padding_supervised else 0 end, false)
    end as ledger_differs
from sft_view_packs as p
join per_pack as v using (pack_id)
