-- review_robots_v1: the analyzers whose comments were loaded (issue 28): Gerrit robot comments
-- (GET /changes/{id}/robotcomments, RobotCommentInfo.robot_id) and comments[].robot_id of
-- sphragis examples files. A robot comment is never a human review comment: refine drops it
-- under the robot_comment rule, and its structured fixes never count as a suggested edit.
-- Grain key: org, robot_id.
-- Grain: one row per (org, analyzer) with at least one loaded comment; sealed windows'
-- comments counted (counts only, no content).
-- Columns: org; robot_id; comments (its comments, in comments); examples (examples holding
-- one); with_fix_suggestions (its comments that carry a structured fix, in comments);
-- fix_suggestions (the fixes, summed); org_comments (every loaded comment of the org);
-- share (comments / org_comments).
with org_totals as (
    select e.org, count(*) as org_comments
    from review_comments as c
    join review_examples as e on e.example_id = c.example_id
    group by e.org
)
select
    e.org,
    c.robot_id,
    count(*) as comments,
    count(distinct c.example_id) as examples,
    count(*) filter (where coalesce(c.fix_suggestions, 0) > 0) as with_fix_suggestions,
    coalesce(sum(c.fix_suggestions), 0)::bigint as fix_suggestions,
    t.org_comments,
    count(*)::double / t.org_comments as share
from review_comments as c
join review_examples as e on e.example_id = c.example_id
join org_totals as t on t.org = e.org
where c.robot_id is not null
group by e.org, c.robot_id, t.org_comments
