-- content views for steps that need example content (refine, `examples --unseal`), with the
-- sealed companion attached as sph_sealed: the main tables with the sealed examples' hunk,
-- target and comment messages read from the companion. Temporary: they live only on this
-- connection, and only while the companion is attached.
-- Grain: one row per example / per comment; columns those of review_examples / review_comments.
create or replace temp view review_examples_content as
select e.* replace (coalesce(s.hunk, e.hunk) as hunk, coalesce(s.target, e.target) as target)
from review_examples as e
left join sph_sealed.sealed_examples as s on s.example_id = e.example_id;
create or replace temp view review_comments_content as
select c.* replace (coalesce(s.message, c.message) as message)
from review_comments as c
left join sph_sealed.sealed_comments as s on s.example_id = c.example_id and s.comment_id = c.comment_id;
