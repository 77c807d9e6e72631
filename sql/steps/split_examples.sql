-- split examples: the content of the examples in one split (for `sphragis examples`).
-- Parameters: $1 version; $2 org; $3 split. The CLI refuses a sealed split without --unseal
-- and logs every unsealed read in sph_log; only then does review_examples_content (a temporary
-- view) read the sealed companion database.
select
    s.example_id,
    e.project,
    e.file_path,
    e.created_at,
    s.half,
    e.hunk,
    e.target,
    (select count(*) from refine_comments as c
      where c.version = s.version and c.example_id = s.example_id and not c.dropped) as comments
from review_splits as s
join review_examples_content as e on e.example_id = s.example_id
where s.version = $1 and s.org = $2 and s.split = $3
order by s.example_id
