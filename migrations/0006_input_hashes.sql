-- 0006 Inputs behind derived columns (issue 8 §3): every stored column computed with a
-- tokenizer, chat template or configuration records that input's SHA-256.
--
-- sft_messages.reasoning_tokens is the thinking body re-tokenized with the tokenizer
-- given to `load trajectories --tokenizer`; the tokenizer.json's SHA-256 is stored
-- beside it (null when no tokenizer was given, or the message has no thinking body).
-- (sft_views.tokenizer_sha256 already records the tokenizer behind vocab_size.)

alter table sft_messages add column reasoning_tokenizer_sha256 varchar;
