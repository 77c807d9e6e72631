-- split_examples_v1: the examples of each split with their prompt (for `sphragis examples`).
-- Grain key: version, example_id.
-- Grain: one row per (version, example) placed by a split (review_splits); version, org,
-- split select one split's examples.
-- Columns: version; org; split; example_id; project; file_path; created_at (UTC); half;
--   sealed (in the org's sealed test window); hunk and target (null for sealed rows: their
--   content stays in the sealed companion, SPEC §1.6); comments (kept comments: those the
--   service_account rule did not drop, i.e. the prompt); prompt (those comments as a list of
--   {comment_id, author_id, created_at, message}, ordered by created_at then comment_id;
--   messages of sealed rows are null).
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
    join review_comments as c on c.example_id = rc.example_id and c.comment_id = rc.comment_id
    where not rc.dropped
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
    case when s.sealed then null else e.hunk end as hunk,
    case when s.sealed then null else e.target end as target,
    coalesce(k.comments, 0) as comments,
    case
        when s.sealed then [{'comment_id': p.comment_id, 'author_id': p.author_id, 'created_at': p.created_at,
                             'message': null::varchar} for p in k.prompt]
        else k.prompt
    end as prompt
from review_splits as s
join review_examples as e on e.example_id = s.example_id
left join kept_comments as k on k.version = s.version and k.example_id = s.example_id
