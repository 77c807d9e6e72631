-- seal step: examples listed in sealed_content (their content is in the sealed companion)
-- whose content is nevertheless in the main file: written back by another client. Their
-- main-file content is blanked again; the companion's copy is left as it is.
-- Grain: one row per example. Columns: example_id.
select s.example_id
from sealed_content as s
join review_examples as e using (example_id)
where e.hunk is not null or e.target is not null
union
select s.example_id
from sealed_content as s
join review_comments as c using (example_id)
where c.message <> ''
