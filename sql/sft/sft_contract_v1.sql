-- sft_contract_v1: the ids/mask contract of every loaded view (SPEC §3.2).
-- Grain key: view_id, check_name.
-- Grain: one row per (view, check). passed is null when the check cannot be made
-- (no tokenizer given, no ledger claimed, no source file declared).
-- Checks: lengths (ids and mask of equal length); vocab (every id in [0, vocab_size));
--   mask_values (every mask value 0 or 1); spans (sorted, non-overlapping, inside the
--   sequence); supervised_in_kept_assistant (every supervised position inside an
--   assistant span of a kept message; keep_msgs null = every assistant message is kept);
--   keep_msgs_assistant (keep_msgs name assistant messages only); ledger (claimed tokens
--   and supervised counts equal the recomputed ones); declared_sha256 (the declared
--   source file's SHA-256 equals the loaded file's); same_tokens (all views of an
--   instance have one token sequence; when they do not, every view of it fails, with
--   the first position where it differs from another view). vocab also fails a
--   negative id when no tokenizer was given (passed is null only when nothing fails).
--   A view must train something (SPEC §3.2): trains_nothing fails a view with no
--   supervised position (mask all 0, labels all -100); kept_message_trains_nothing
--   fails a view in which a message named in keep_msgs (an assistant span) has no
--   supervised position (not checked without keep_msgs or without spans: a view that
--   names no kept messages may leave assistant turns unsupervised, e.g. a recovery
--   window).
-- Columns: view_id; pool; instance_id; check_name; passed; position (first offending
--   token position, 0-based, or span ordinal for spans; for kept_message_trains_nothing
--   the start of the first untrained kept message); detail (text, failures only).
with v as (
    select * from sft_views
),
lengths as (
    select view_id, 'lengths' as check_name, n_ids = n_mask as passed,
           case when n_ids <> n_mask then least(n_ids, n_mask) end as position,
           case when n_ids <> n_mask then format('{} ids, {} mask values', n_ids, n_mask) end as detail
    from v
),
vocab as (
    select view_id, 'vocab' as check_name,
           case when p > 0 then false when vocab_size is not null then true end as passed,
           case when p > 0 then p - 1 end as position,
           case when p > 0 then format('id {} outside [0, {})', input_ids[p], coalesce(vocab_size::varchar, 'unknown vocabulary size')) end as detail
    from (select *,
                 coalesce(list_position(list_transform(input_ids,
                     lambda x: x < 0 or (vocab_size is not null and x >= vocab_size)), true), 0) as p
          from v)
),
mask_values as (
    select view_id, 'mask_values' as check_name, p = 0 as passed,
           case when p > 0 then p - 1 end as position,
           case when p > 0 then format('mask value {}', loss_mask[p]) end as detail
    from (select *, coalesce(list_position(list_transform(loss_mask, lambda x: x not in (0, 1)), true), 0) as p from v)
),
ordered as (
    select s.*, v.n_ids,
           lag(s.end_pos) over (partition by s.view_id order by s.ordinal) as previous_end,
           lag(s.msg_index) over (partition by s.view_id order by s.ordinal) as previous_index
    from sft_view_spans as s
    join v using (view_id)
),
span_faults as (
    select view_id, min(ordinal) as ordinal, arg_min(
        case
            when start_pos < 0 or end_pos > n_ids then format('span {} [{}, {}) is outside the {} tokens', msg_index, start_pos, end_pos, n_ids)
            when end_pos < start_pos then format('span {} ends before it starts', msg_index)
            when start_pos < previous_end then format('span {} starts at {}, inside the previous span (ends {})', msg_index, start_pos, previous_end)
            else format('span {} comes after span {}', msg_index, previous_index)
        end, ordinal) as detail
    from ordered
    where start_pos < 0 or end_pos > n_ids or end_pos < start_pos or start_pos < previous_end or msg_index <= previous_index
    group by view_id
),
spans as (
    select v.view_id, 'spans' as check_name, f.view_id is null as passed, f.ordinal as position, f.detail
    from v left join span_faults as f using (view_id)
),
allowed as (
    select s.view_id, s.start_pos, s.end_pos
    from sft_view_spans as s
    join v using (view_id)
    where s.role = 'assistant' and (v.keep_msgs is null or list_contains(v.keep_msgs, s.msg_index))
),
run_faults as (
    select r.view_id,
           min(case when a.view_id is null then r.run_start else a.end_pos end) as position
    from sft_view_runs as r
    left join allowed as a on a.view_id = r.view_id and r.run_start >= a.start_pos and r.run_start < a.end_pos
    where a.view_id is null or r.run_end > a.end_pos
    group by r.view_id
),
has_spans as (
    select distinct view_id from sft_view_spans
),
supervised as (
    select v.view_id, 'supervised_in_kept_assistant' as check_name,
           h.view_id is not null and f.view_id is null as passed,
           f.position,
           case
               when h.view_id is null then 'no message spans to check against'
               when f.view_id is not null then format('supervised position {} is outside every assistant span of a kept message', f.position)
           end as detail
    from v
    left join has_spans as h using (view_id)
    left join run_faults as f using (view_id)
),
keep_faults as (
    select v.view_id, min(k.msg) as msg
    from v, unnest(v.keep_msgs) as k(msg)
    where not exists (
        select 1 from sft_view_spans as s
        where s.view_id = v.view_id and s.msg_index = k.msg and s.role = 'assistant'
    )
    group by v.view_id
),
keep as (
    select v.view_id, 'keep_msgs_assistant' as check_name,
           case when v.keep_msgs is not null then f.view_id is null end as passed,
           null::integer as position,
           case when f.view_id is not null then format('keep_msgs names message {}, which is not an assistant message', f.msg) end as detail
    from v left join keep_faults as f using (view_id)
),
ledger as (
    select view_id, 'ledger' as check_name,
           case when claimed_tokens is not null or claimed_supervised is not null then
               coalesce(claimed_tokens = n_ids, true) and coalesce(claimed_supervised = supervised, true) end as passed,
           null::integer as position,
           case when claimed_tokens <> n_ids or claimed_supervised <> supervised then
               format('claimed {} tokens / {} supervised, recomputed {} / {}', claimed_tokens, claimed_supervised, n_ids, supervised) end as detail
    from (select *, len(list_filter(loss_mask, lambda x: x = 1)) as supervised from v)
),
declared as (
    select v.view_id, 'declared_sha256' as check_name,
           case when v.declared_sha256 is not null and l.sha256 is not null then l.sha256 = v.declared_sha256 end as passed,
           null::integer as position,
           case when l.sha256 <> v.declared_sha256 then format('{} has sha256 {}, the view declares {}', l.path, l.sha256, v.declared_sha256) end as detail
    from v
    left join ingest_log as l on v.declared_path is not null and (l.path = v.declared_path or l.path like '%/' || v.declared_path)
),
sequences as (
    select instance_id, count(distinct input_ids) as distinct_sequences from v group by instance_id
),
others as (
    -- for each view, the first other view of its instance (by view_id) with other tokens
    select a.view_id, arg_min(b.view_id, b.view_id) as other_view, arg_min(b.input_ids, b.view_id) as other_ids
    from v as a
    join v as b on b.instance_id = a.instance_id and b.input_ids <> a.input_ids
    group by a.view_id
),
same as (
    -- every view of an instance whose views disagree fails: no view is presumed right
    select v.view_id, 'same_tokens' as check_name, s.distinct_sequences = 1 as passed,
           case when o.view_id is not null then coalesce(list_position(list_transform(
               generate_series(1, greatest(len(v.input_ids), len(o.other_ids))),
               lambda i: v.input_ids[i] is distinct from o.other_ids[i]), true) - 1, 0) end as position,
           case when o.view_id is not null then format('{} distinct token sequences among the views of this instance; first difference from view {}',
               s.distinct_sequences, o.other_view) end as detail
    from v
    join sequences as s using (instance_id)
    left join others as o using (view_id)
),
trained as (
    select distinct view_id from sft_view_runs
),
trains as (
    select v.view_id, 'trains_nothing' as check_name, t.view_id is not null as passed,
           null::integer as position,
           case when t.view_id is null then format('no supervised position in {} mask values (from {}): the view trains nothing',
               v.n_mask, v.mask_source) end as detail
    from v left join trained as t using (view_id)
),
kept_spans as (
    select s.view_id, s.msg_index, s.start_pos, s.end_pos
    from sft_view_spans as s
    join v using (view_id)
    where s.role = 'assistant' and list_contains(v.keep_msgs, s.msg_index)
),
untrained_kept as (
    select k.view_id, count(*) as messages,
           arg_min(k.msg_index, k.start_pos) as msg_index, min(k.start_pos) as start_pos, arg_min(k.end_pos, k.start_pos) as end_pos
    from kept_spans as k
    where not exists (
        select 1 from sft_view_runs as r
        where r.view_id = k.view_id and r.run_start < k.end_pos and r.run_end > k.start_pos
    )
    group by k.view_id
),
kept_trained as (
    select v.view_id, 'kept_message_trains_nothing' as check_name,
           case when v.keep_msgs is not null and h.view_id is not null then u.view_id is null end as passed,
           u.start_pos as position,
           case when u.view_id is not null then format('kept assistant message {} (tokens {}..{}) has no supervised position{}',
               u.msg_index, u.start_pos, u.end_pos,
               case when u.messages > 1 then format('; {} kept messages train nothing', u.messages) else '' end) end as detail
    from v
    left join has_spans as h using (view_id)
    left join untrained_kept as u using (view_id)
),
checks as (
    select * from lengths
    union all select * from vocab
    union all select * from mask_values
    union all select * from spans
    union all select * from supervised
    union all select * from keep
    union all select * from ledger
    union all select * from declared
    union all select * from same
    union all select * from trains
    union all select * from kept_trained
)
select v.view_id, v.pool, v.instance_id, c.check_name, c.passed, c.position, c.detail
from checks as c
join v using (view_id)
