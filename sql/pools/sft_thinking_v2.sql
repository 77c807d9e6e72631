-- sft_thinking_v2: thinking bodies of assistant messages (SPEC §3.4), per trajectory source.
-- Grain key: source.
-- Grain: one row per source with assistant messages.
-- Columns: assistant_messages; bodies (with a thinking text); blank (a thinking text of
--   whitespace only: a placeholder); chars_p50, chars_p90, chars_max (non-blank bodies,
--   characters, linear interpolation); tokens_p50, tokens_p90, tokens_max (re-tokenized
--   with the tokenizer given to `load trajectories`; null without one); long_repetition
--   (stored verdict: >= 3,000 characters and zlib compressed/raw < 0.1); tokenizer_sha256
--   (the SHA-256 of the tokenizer.json behind the token figures; several, comma-separated,
--   when the source's files were loaded with different tokenizers; null without one).
-- Same rows as sft_thinking_v1, with the tokenizer list sorted by list_sort over a
-- distinct list instead of an ordered string_agg (Spark's collect_list keeps no order, so
-- the ordered aggregate is not portable); it runs on Spark too (README "Beyond one machine").
select
    t.source,
    count(*) as assistant_messages,
    count(m.reasoning) as bodies,
    count(*) filter (where m.reasoning is not null and trim(m.reasoning) = '') as blank,
    quantile_cont(m.reasoning_chars, 0.5) filter (where trim(m.reasoning) <> '') as chars_p50,
    quantile_cont(m.reasoning_chars, 0.9) filter (where trim(m.reasoning) <> '') as chars_p90,
    max(m.reasoning_chars) as chars_max,
    quantile_cont(m.reasoning_tokens, 0.5) filter (where trim(m.reasoning) <> '') as tokens_p50,
    quantile_cont(m.reasoning_tokens, 0.9) filter (where trim(m.reasoning) <> '') as tokens_p90,
    max(m.reasoning_tokens) as tokens_max,
    count(*) filter (where m.long_repetition) as long_repetition,
    case when count(m.reasoning_tokenizer_sha256) > 0 then
        array_to_string(list_sort(list(distinct m.reasoning_tokenizer_sha256)
            filter (where m.reasoning_tokenizer_sha256 is not null)), ',') end as tokenizer_sha256
from sft_messages as m
join sft_trajectories as t using (instance_id)
where m.role = 'assistant'
group by t.source
