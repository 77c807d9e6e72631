-- show view, step 2: the message spans of one view, in their input order.
-- Parameter: $1 view_id. Columns: ordinal; msg_index; role; start_pos; end_pos (exclusive);
--   kept (an assistant message kept for loss; null for other roles).
select s.ordinal, s.msg_index, s.role, s.start_pos, s.end_pos,
       case when s.role = 'assistant' then v.keep_msgs is null or list_contains(v.keep_msgs, s.msg_index) end as kept
from sft_view_spans as s
join sft_views as v using (view_id)
where s.view_id = $1
order by s.ordinal
