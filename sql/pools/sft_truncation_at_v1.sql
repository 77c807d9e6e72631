-- sft_truncation_at_v1(max_lengths, side): truncation survival per pool (SPEC §3.4): how
-- many views exceed each maximum length, the supervised tokens truncation loses, the views
-- it leaves with no supervised token (they train at zero loss silently in common
-- trainers), trained assistant messages cut mid-message or dropped, and final reports
-- lost. Per-view figures and their definitions: sft_truncation_views_at_v1.
-- Parameters: max_lengths INTEGER[] (each >= 1); side VARCHAR ('right' or 'left').
--   Called by sft_truncation_v1 (8k/16k/32k/64k, right) and
--   `sphragis report truncation --max-length N,... [--side left]`.
-- Grain key: max_length, side, pool.
-- Grain: one row per (max_length, pool) of the pools that hold views.
-- Columns: max_length; side; pool; role (from the pool roles; null when none is loaded);
--   views (all views of the pool); views_over (n_ids > max_length); supervised (all
--   supervised positions of the pool); supervised_lost; lost_share (supervised_lost /
--   supervised); views_all_masked_after; trained_messages_cut; trained_messages_dropped;
--   final_reports_lost.
create or replace macro sft_truncation_at_v1(max_lengths integer[], side varchar) as table
with lengths as (
    select unnest(max_lengths) as max_length
),
pools as (
    select v.pool, count(*) as views, sum(v.supervised) as supervised
    from (select v.view_id, v.pool, coalesce((select sum(r.run_end - r.run_start) from sft_view_runs as r where r.view_id = v.view_id), 0) as supervised
          from sft_views as v) as v
    group by v.pool
),
over as (
    select max_length, pool,
           count(*) as views_over,
           sum(supervised_lost) as supervised_lost,
           count(*) filter (where all_masked_after) as views_all_masked_after,
           sum(trained_messages_cut) as trained_messages_cut,
           sum(trained_messages_dropped) as trained_messages_dropped,
           count(*) filter (where final_report_lost) as final_reports_lost
    from sft_truncation_views_at_v1(max_lengths, side)
    group by max_length, pool
)
select
    l.max_length,
    side as side,
    p.pool,
    r.role,
    p.views,
    coalesce(o.views_over, 0) as views_over,
    p.supervised::bigint as supervised,
    coalesce(o.supervised_lost, 0)::bigint as supervised_lost,
    coalesce(o.supervised_lost, 0) / nullif(p.supervised, 0) as lost_share,
    coalesce(o.views_all_masked_after, 0) as views_all_masked_after,
    coalesce(o.trained_messages_cut, 0)::bigint as trained_messages_cut,
    coalesce(o.trained_messages_dropped, 0)::bigint as trained_messages_dropped,
    coalesce(o.final_reports_lost, 0) as final_reports_lost
from lengths as l
cross join pools as p
left join sft_pool_roles as r on r.pool = p.pool
left join over as o on o.max_length = l.max_length and o.pool = p.pool
