-- sft_segment_supervision_v2: supervised tokens per view, role and segment (issue 9,
-- segment-level mask audit). Segments are the parts a chat template renders for each
-- message — header (`<|im_start|>assistant\n`), thinking block, visible text, tool-call
-- block, end of turn (`<|im_end|>\n`), the content of other roles — cut from each
-- view's token ids with the added tokens of the tokenizer given at load
-- (src/sft/segments.rs, stored in sft_view_segments) and intersected here with the
-- supervised runs (sft_view_runs, mask value 1).
-- Grain key: view_id, role, segment.
-- Grain: one row per (view, role, segment); role is null for segment 'outside'
--   (positions in no message span). A view whose file was loaded without --tokenizer
--   has one row with segment 'unknown' and role null: its segments are unknown, not 0.
-- Pattern scope: for assistant rows, the assistant messages of the view that are
--   trained (at least one supervised position), so a view that trains only some turns
--   (keep_msgs, a recovery window, the final report) is compared on the turns it
--   trains; when it trains no assistant message, all of them. Every other role (and
--   'outside') is read over all its tokens.
-- Columns: view_id; pool; instance_id; role; segment (header | thinking | text |
--   tool_call | <other block tag> | end_of_turn | content | outside | unknown);
--   messages (message spans holding the segment; 0 for outside and unknown); tokens;
--   supervised (tokens with mask 1); trained_messages (of those messages, how many are
--   trained); scope_tokens, scope_supervised (the tokens the pattern reads, see above);
--   pattern: always (scope_supervised = scope_tokens) | never (0) | partly, null when
--   the segment lies only in untrained assistant messages of a view that trains others
--   (compared nowhere) and for 'unknown'; tokenizer_sha256 (the tokenizer whose added
--   tokens cut the segments; null for 'unknown').
-- Same rows as sft_segment_supervision_v1, with the supervised positions before each
-- segment boundary read from the last run starting at or before it by a window over the
-- runs and boundaries of the view in position order (last_value ... ignore nulls) instead
-- of an ASOF JOIN (Spark SQL has none); it runs on Spark too (README "Beyond one machine").
with runs as (
    -- each run with the supervised positions before it in its view
    select view_id, run_start, run_end,
           coalesce(sum(run_end - run_start) over (partition by view_id order by run_start
                    rows between unbounded preceding and 1 preceding), 0) as supervised_before
    from sft_view_runs
),
boundaries as (
    select view_id, start_pos as pos from sft_view_segments
    union
    select view_id, end_pos as pos from sft_view_segments
),
events as (
    -- a run sorts before a boundary at its start (the boundary counts it, as `>=` did)
    select view_id, pos, 1 as kind, null::bigint as run_start, null::bigint as run_end, null::bigint as supervised_before
    from boundaries
    union all
    select view_id, run_start as pos, 0 as kind, run_start, run_end, supervised_before
    from runs
),
located as (
    -- the last run starting at or before each boundary (runs of a view are disjoint, so
    -- the three values come from one run)
    select view_id, pos, kind,
           last_value(run_start ignore nulls) over (partition by view_id order by pos, kind
                                                    rows between unbounded preceding and current row) as run_start,
           last_value(run_end ignore nulls) over (partition by view_id order by pos, kind
                                                  rows between unbounded preceding and current row) as run_end,
           last_value(supervised_before ignore nulls) over (partition by view_id order by pos, kind
                                                            rows between unbounded preceding and current row) as supervised_before
    from events
),
supervised_to as (
    -- supervised positions before each boundary
    select view_id, pos, coalesce(supervised_before + least(pos, run_end) - run_start, 0) as supervised
    from located
    where kind = 1
),
segments as (
    select g.view_id, g.ordinal, g.role, g.segment, g.start_pos, g.end_pos,
           e.supervised - s.supervised as supervised
    from sft_view_segments as g
    join supervised_to as s on s.view_id = g.view_id and s.pos = g.start_pos
    join supervised_to as e on e.view_id = g.view_id and e.pos = g.end_pos
),
messages as (
    select *, sum(supervised) over (partition by view_id, ordinal) > 0 as message_trained
    from segments
),
views_training as (
    select view_id, coalesce(bool_or(message_trained) filter (where role = 'assistant'), false) as trains_assistant
    from messages
    group by view_id
),
scoped as (
    select m.*, case when m.role = 'assistant' and t.trains_assistant then m.message_trained else true end as in_scope
    from messages as m
    join views_training as t using (view_id)
),
per_segment as (
    select view_id, role, segment,
           count(distinct ordinal) as messages,
           sum(end_pos - start_pos) as tokens,
           sum(supervised) as supervised,
           count(distinct ordinal) filter (where message_trained) as trained_messages,
           coalesce(sum(end_pos - start_pos) filter (where in_scope), 0) as scope_tokens,
           coalesce(sum(supervised) filter (where in_scope), 0) as scope_supervised
    from scoped
    group by view_id, role, segment
),
unknown as (
    -- views of files loaded without a tokenizer: their segments were never derived
    select v.view_id, null::varchar as role, 'unknown' as segment, 0 as messages, v.n_ids as tokens,
           (select coalesce(sum(r.run_end - r.run_start), 0) from sft_view_runs as r where r.view_id = v.view_id) as supervised,
           0 as trained_messages, null::bigint as scope_tokens, null::bigint as scope_supervised
    from sft_views as v
    where v.file_id not in (select file_id from sft_segment_files)
),
final as (
    select p.*,
           case
               when p.scope_tokens = 0 then null
               when p.scope_supervised = p.scope_tokens then 'always'
               when p.scope_supervised = 0 then 'never'
               else 'partly'
           end as pattern
    from per_segment as p
    union all
    select u.*, null as pattern from unknown as u
)
select f.view_id, v.pool, v.instance_id, f.role, f.segment,
       f.messages::bigint as messages, f.tokens::bigint as tokens, f.supervised::bigint as supervised,
       f.trained_messages::bigint as trained_messages,
       f.scope_tokens::bigint as scope_tokens, f.scope_supervised::bigint as scope_supervised,
       f.pattern, s.tokenizer_sha256
from final as f
join sft_views as v using (view_id)
left join sft_segment_files as s on s.file_id = v.file_id
