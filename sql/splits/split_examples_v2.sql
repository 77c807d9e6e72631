-- split_examples_v2: the examples of each split with their prompt (for `sphragis examples`).
-- Grain key: version, example_id.
-- Grain: one row per (version, example) placed by a split (review_splits); version, org,
-- split select one split's examples.
-- Columns: version; org; split; example_id; project; file_path; created_at (UTC); half;
--   sealed (in the org's sealed test window); hunk and target (null for sealed rows: their
--   content stays in the sealed companion, SPEC §1.6); comments (kept comments: those the
--   service_account rule did not drop, i.e. the prompt); prompt (those comments as a list of
--   {comment_id, author_id, created_at, message}, ordered by created_at then comment_id;
--   messages of sealed rows are null).
-- Same rows as split_examples_v1, with the prompt ordered by sorting a list of structs that
-- lead with each comment's rank (row_number over created_at nulls last, comment_id: unique
-- within an example, so the sort is that order) instead of an ordered list(... order by ...)
-- (Spark's collect_list keeps no order), and the sealed rows' messages blanked with
-- list_transform instead of a list comprehension (sqlglot writes no Spark form of it); it
-- runs on Spark too (README "Beyond one machine").
with ranked as (
    select
        rc.version,
        rc.example_id,
        row_number() over (partition by rc.version, rc.example_id order by c.created_at nulls last, c.comment_id) as rank,
        c.comment_id,
        c.author_id,
        c.created_at,
        c.message
    from refine_comments as rc
    join review_comments as c on c.example_id = rc.example_id and c.comment_id = rc.comment_id
    where not rc.dropped
),
kept_comments as (
    select
        version,
        example_id,
        list_transform(
            list_sort(list({'rank': rank, 'comment_id': comment_id, 'author_id': author_id,
                            'created_at': created_at, 'message': message})),
            lambda p: {'comment_id': p.comment_id, 'author_id': p.author_id, 'created_at': p.created_at,
                       'message': p.message}
        ) as prompt,
        count(*) as comments
    from ranked
    group by version, example_id
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
        when s.sealed then list_transform(k.prompt, lambda p: {'comment_id': p.comment_id, 'author_id': p.author_id,
                                                               'created_at': p.created_at, 'message': null::varchar})
        else k.prompt
    end as prompt
from review_splits as s
join review_examples as e on e.example_id = s.example_id
left join kept_comments as k on k.version = s.version and k.example_id = s.example_id
