-- sft_assistant_supervision_v1: how each assistant message of each view is supervised
-- (SPEC §3.2). A kept message with no supervised position is a contract failure
-- (sft_contract_v1, kept_message_trains_nothing); a message supervised only inside its
-- role header is an audit finding, listed here as header_only: it trains the tokens
-- every assistant turn opens with, none of the message's own output.
-- Grain key: view_id, msg_index.
-- Grain: one row per (view, assistant message span).
-- The header is read from the view's own tokens, not from a template: the longest token
--   prefix that every assistant span of the view starts with (in ChatML renderings
--   `<|im_start|>assistant\n`, plus any fixed text every turn opens with), sought within
--   the first 16 tokens of each span (spans whose first 16 tokens equal the first
--   span's are left out of the comparison); null when no assistant span opens
--   differently from the first (fewer than two assistant spans, or identical turns),
--   and then no message is called header_only.
-- Columns: view_id; pool; instance_id; msg_index; kept (whether keep_msgs names it; null
--   when the view has no keep_msgs); start_pos; end_pos (exclusive); tokens; supervised
--   (positions of the span with mask 1); header_tokens; supervised_after_header
--   (supervised positions past the header; = supervised when the header is unknown);
--   finding: untrained (no supervised position), header_only (supervised only inside the
--   header), trained (supervised past the header).
with spans as (
    select s.view_id, s.ordinal, s.msg_index, s.start_pos, s.end_pos, v.pool, v.instance_id,
           list_contains(v.keep_msgs, s.msg_index) as kept,
           list_slice(v.input_ids, s.start_pos + 1, least(s.end_pos, s.start_pos + 16)) as head,
           first_value(list_slice(v.input_ids, s.start_pos + 1, least(s.end_pos, s.start_pos + 16)))
               over (partition by s.view_id order by s.ordinal) as first_head,
           count(*) over (partition by s.view_id) as assistant_spans
    from sft_view_spans as s
    join sft_views as v using (view_id)
    where s.role = 'assistant'
),
shared as (
    -- per span, the length of the token prefix it shares with the view's first assistant span
    select *, coalesce(list_position(list_transform(generate_series(1, least(len(head), len(first_head))),
                  lambda i: head[i] <> first_head[i]), true) - 1, least(len(head), len(first_head))) as common
    from spans
),
headers as (
    -- spans that open exactly like the first one (identical short turns) say nothing
    select view_id, min(common) as header_tokens
    from shared
    where assistant_spans >= 2 and head <> first_head
    group by view_id
),
supervision as (
    select s.view_id, s.ordinal,
           -- (least/greatest skip nulls: count only rows that joined a run)
           coalesce(sum(greatest(0, least(r.run_end, s.end_pos) - greatest(r.run_start, s.start_pos)))
               filter (where r.view_id is not null), 0) as supervised,
           coalesce(sum(greatest(0, least(r.run_end, s.end_pos) - greatest(r.run_start, s.start_pos + coalesce(h.header_tokens, 0))))
               filter (where r.view_id is not null), 0) as supervised_after_header
    from shared as s
    left join headers as h using (view_id)
    left join sft_view_runs as r on r.view_id = s.view_id and r.run_start < s.end_pos and r.run_end > s.start_pos
    group by s.view_id, s.ordinal
)
select s.view_id, s.pool, s.instance_id, s.msg_index, s.kept, s.start_pos, s.end_pos,
       s.end_pos - s.start_pos as tokens,
       u.supervised, h.header_tokens, u.supervised_after_header,
       case
           when u.supervised = 0 then 'untrained'
           when u.supervised_after_header = 0 then 'header_only'
           else 'trained'
       end as finding
from shared as s
join supervision as u using (view_id, ordinal)
left join headers as h using (view_id)
