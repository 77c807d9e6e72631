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
--   spans_continuing; position_jumps; first_supervised (conversations after the first whose
--   first position is supervised: its target is scored from the last position of the
--   conversation before, which HF's DataCollatorWithFlattening masks); cut (the row was
--   cut into views: two or more conversations, or padding); supervised (supervised
--   positions of the row: its views' plus supervised padding); claimed_tokens;
--   claimed_supervised (the row's ledger); attention_crosses
--   (spans restart with no boundary given: the conversations attended to each other);
--   instances_unattributed (fewer instance ids than conversations: every conversation is
--   counted under the first's instance); off_turns (a span restarts where no conversation
--   starts, runs past its conversation, starts outside every conversation, a later
--   conversation opens mid-conversation, or position_ids jump);
--   ledger_differs (the claimed counts are not the row's; null without a claim).
with cut as (
    select *, n_units > 1 or n_padding > 0 as cut from sft_view_packs
),
views as (
    -- the views cut from a row, or the row kept whole
    select u.pack_id, v.pool, v.instance_id, u.pack_index, v.loss_mask, v.view_id
    from sft_view_pack_units as u
    join sft_views as v using (view_id)
    union all
    select p.pack_id, v.pool, v.instance_id, 0, v.loss_mask, v.view_id
    from cut as p
    join sft_views as v on v.view_id = p.pack_id
    where not p.cut
),
supervised as (
    select view_id, sum(run_end - run_start) as supervised from sft_view_runs group by view_id
),
per_pack as (
    select pack_id, any_value(pool) as pool, count(distinct instance_id) as distinct_instances,
           coalesce(sum(r.supervised), 0) as supervised,
           -- the first position of a later conversation is scored from the last of the one before
           count(*) filter (where pack_index > 0 and loss_mask[1] = 1) as first_supervised
    from views
    left join supervised as r using (view_id)
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
    p.spans_continuing,
    p.position_jumps,
    v.first_supervised,
    p.cut,
    (v.supervised + p.padding_supervised)::bigint as supervised,
    p.claimed_tokens,
    p.claimed_supervised,
    p.boundary_source is null and p.span_restarts > 0 as attention_crosses,
    p.instances_declared < p.n_units as instances_unattributed,
    p.boundary_source is not null
        and (p.span_restarts + p.spans_crossing + p.spans_unplaced + p.spans_continuing + p.position_jumps) > 0
        as off_turns,
    case when p.claimed_tokens is not null or p.claimed_supervised is not null
         then coalesce(p.claimed_tokens <> p.n_positions, false)
              or coalesce(p.claimed_supervised <> v.supervised + p.padding_supervised, false)
    end as ledger_differs
from cut as p
join per_pack as v using (pack_id)
