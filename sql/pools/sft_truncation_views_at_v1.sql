-- sft_truncation_views_at_v1(max_lengths, side): what truncating each view to a maximum
-- length does to its supervision (SPEC §3.4 truncation survival), per view longer than the
-- length. Right truncation keeps positions [0, N); left truncation keeps [n_ids - N, n_ids).
-- A "trained message" is an assistant message span with at least one supervised position;
-- the final report is the view's last assistant message.
-- Parameters: max_lengths INTEGER[] (token counts, each >= 1); side VARCHAR ('right' or
--   'left'; anything else is an error). Called by sft_truncation_views_v1 (32,768, right)
--   and `sphragis report truncation-views --max-length N [--side left]`.
-- Grain key: max_length, side, view_id.
-- Grain: one row per (max_length, view) for views with n_ids > max_length.
-- Columns: max_length; side; view_id; pool; instance_id; n_ids (tokens); kept_from, kept_to
--   (the window kept, [from, to)); supervised (positions with mask 1); supervised_kept;
--   supervised_lost; all_masked_after (trained something before, nothing after: such a row
--   trains at zero loss in common trainers); trained_messages_cut (trained assistant
--   messages the boundary cuts mid-message); trained_messages_dropped (trained assistant
--   messages wholly outside the window); final_report_lost (the last assistant message is
--   supervised and not wholly inside the window).
create or replace macro sft_truncation_views_at_v1(max_lengths integer[], side varchar) as table
with lengths as (
    select unnest(max_lengths) as max_length
),
windows as (
    select l.max_length, v.view_id, v.pool, v.instance_id, v.n_ids,
           case side when 'right' then 0
                     when 'left' then v.n_ids - l.max_length
                     else error('side must be ''right'' or ''left'', not ' || side) end as lo,
           case side when 'right' then l.max_length else v.n_ids end as hi
    from sft_views as v, lengths as l
    where v.n_ids > l.max_length
),
supervision as (
    select w.max_length, w.view_id,
           coalesce(sum(r.run_end - r.run_start), 0) as supervised,
           coalesce(sum(greatest(0, least(r.run_end, w.hi) - greatest(r.run_start, w.lo))), 0) as supervised_kept
    from windows as w left join sft_view_runs as r on r.view_id = w.view_id
    group by w.max_length, w.view_id
),
assistant as (
    select s.view_id, s.msg_index, s.start_pos, s.end_pos,
           s.start_pos = max(s.start_pos) over (partition by s.view_id) as is_final
    from sft_view_spans as s
    where s.role = 'assistant'
),
trained as (
    select a.view_id, a.msg_index, a.start_pos, a.end_pos, a.is_final
    from assistant as a
    where exists (select 1 from sft_view_runs as r
                  where r.view_id = a.view_id and r.run_start < a.end_pos and r.run_end > a.start_pos)
),
messages as (
    select w.max_length, w.view_id,
           count(*) filter (where (t.start_pos < w.lo and t.end_pos > w.lo) or (t.start_pos < w.hi and t.end_pos > w.hi)) as cut,
           count(*) filter (where t.end_pos <= w.lo or t.start_pos >= w.hi) as dropped,
           coalesce(bool_or(t.is_final and (t.start_pos < w.lo or t.end_pos > w.hi)), false) as final_lost
    from windows as w join trained as t on t.view_id = w.view_id
    group by w.max_length, w.view_id
)
select
    w.max_length,
    side as side,
    w.view_id,
    w.pool,
    w.instance_id,
    w.n_ids,
    w.lo as kept_from,
    w.hi as kept_to,
    s.supervised::bigint as supervised,
    s.supervised_kept::bigint as supervised_kept,
    (s.supervised - s.supervised_kept)::bigint as supervised_lost,
    s.supervised > 0 and s.supervised_kept = 0 as all_masked_after,
    coalesce(m.cut, 0) as trained_messages_cut,
    coalesce(m.dropped, 0) as trained_messages_dropped,
    coalesce(m.final_lost, false) as final_report_lost
from windows as w
join supervision as s on s.max_length = w.max_length and s.view_id = w.view_id
left join messages as m on m.max_length = w.max_length and m.view_id = w.view_id
