-- sft_view_positions_at_v1(of_view): every token position of one SFT view with its loss
-- mask, the message span it lies in, whether that message is kept for loss, its exposure
-- and whether it lies in its instance's recovery region (SPEC §3.2-3.3). The rows behind
-- the loss-mask viewer, `sphragis show view VIEW_ID`.
-- Parameters: of_view VARCHAR (a view_id of sft_views; an unknown id gives no rows).
-- Grain key: position.
-- Grain: one row per position 0 .. greatest(n_ids, n_mask) - 1 of the view (a view whose
--   ids and mask differ in length has rows past the shorter list, with a null there).
-- Columns: view_id; position (0-based token index); token_id (null past the ids);
--   mask (the loss-mask value as loaded, null past the mask); supervised (mask = 1);
--   span_ordinal, msg_index, role (the first message span, by ordinal, that holds the
--   position; null outside every span); kept (the span is an assistant message kept for
--   loss, keep_msgs null = every assistant message; null outside assistant spans);
--   exposure (training views of the view's instance that supervise the position, as
--   sft_position_exposure_v1 counts them; 0 when none does); recovery (the position is
--   supervised by a view of the same instance in a pool whose role is recovery; null when
--   no pool has that role).
create or replace macro sft_view_positions_at_v1(of_view varchar) as table
with v as (
    select * from sft_views where view_id = of_view
),
positions as (
    select v.view_id, v.instance_id, v.keep_msgs, p.position,
           v.input_ids[p.position + 1] as token_id,
           v.loss_mask[p.position + 1] as mask
    from v, unnest(range(greatest(v.n_ids, v.n_mask))) as p(position)
),
first_span as (
    select p.position, min(s.ordinal) as span_ordinal
    from positions as p
    join sft_view_spans as s on s.view_id = p.view_id and p.position >= s.start_pos and p.position < s.end_pos
    group by p.position
),
exposure as (
    select e.position, e.exposure
    from sft_position_exposure_v1 as e
    where e.instance_id = (select instance_id from v)
),
recovery_pools as (
    select pool from sft_pool_roles where role = 'recovery'
),
region as (
    select distinct unnest(range(r.run_start, r.run_end)) as position
    from sft_view_runs as r
    join sft_views as w using (view_id)
    where w.instance_id = (select instance_id from v) and w.pool in (select pool from recovery_pools)
),
final as (
    select p.view_id, p.position, p.token_id, p.mask, coalesce(p.mask = 1, false) as supervised,
           s.ordinal as span_ordinal, s.msg_index, s.role,
           case when s.role = 'assistant' then p.keep_msgs is null or list_contains(p.keep_msgs, s.msg_index) end as kept,
           coalesce(e.exposure, 0) as exposure,
           case when exists (select 1 from recovery_pools) then r.position is not null end as recovery
    from positions as p
    left join first_span as f using (position)
    left join sft_view_spans as s on s.view_id = p.view_id and s.ordinal = f.span_ordinal
    left join exposure as e using (position)
    left join region as r using (position)
)
select * from final
order by position
