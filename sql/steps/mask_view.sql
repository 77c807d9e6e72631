-- show view, step 1: the view-level facts the loss-mask viewer prints above the tokens
-- (`sphragis show view`). Parameter: $1 view_id. One row, or none for an unknown id.
-- Columns: pool; instance_id; n_ids; n_mask; mask_source; keep_msgs; vocab_size;
--   tokenizer_sha256 (the tokenizer the view records: given at `load views --tokenizer`,
--   else the one `views build` wrote into its origin; null when it records none);
--   tokenizer_from ('load' or 'origin'); supervised (positions with mask 1).
select pool, instance_id, n_ids, n_mask, mask_source, keep_msgs, vocab_size,
       coalesce(tokenizer_sha256, json_extract_string(origin, '$.tokenizer_sha256')) as tokenizer_sha256,
       case when tokenizer_sha256 is not null then 'load'
            when json_extract_string(origin, '$.tokenizer_sha256') is not null then 'origin' end as tokenizer_from,
       len(list_filter(loss_mask, lambda x: x = 1)) as supervised
from sft_views
where view_id = $1
