-- split examples, unsealed: the content of the examples in one split of the sealed test
-- window (for `sphragis examples --unseal`), the columns of view split_examples_v1 with the
-- content read from the sealed companion. Parameters: $1 version; $2 org; $3 split. The CLI
-- refuses a sealed split without --unseal and logs every unsealed read in sph_log; only then
-- do review_examples_content / review_comments_content (temporary views) read the companion.
with kept_comments as (
    select
        rc.version,
        rc.example_id,
        list({
            'comment_id': c.comment_id,
            'author_id': c.author_id,
            'created_at': c.created_at,
            'message': c.message
        } order by c.created_at nulls last, c.comment_id) as prompt,
        count(*) as comments
    from refine_comments as rc
    join review_comments_content as c on c.example_id = rc.example_id and c.comment_id = rc.comment_id
    where not rc.dropped and rc.version = $1
    group by rc.version, rc.example_id
)
select
    s.version,
    s.org,
    s.split,
    s.example_id,
    e.project,
    e.file_path,
    e.created_at,
    s.half,
    s.sealed,
    e.hunk,
    e.target,
    coalesce(k.comments, 0) as comments,
    k.prompt
from review_splits as s
join review_examples_content as e on e.example_id = s.example_id
left join kept_comments as k on k.version = s.version and k.example_id = s.example_id
where s.version = $1 and s.org = $2 and s.split = $3
order by s.example_id
