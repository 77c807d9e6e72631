-- show view, for an unknown id: up to five loaded view ids that contain it (case
-- ignored) or whose instance it is, to name in the error. Parameter: $1 the id given.
select view_id
from sft_views
where contains(lower(view_id), lower($1)) or instance_id = $1
order by view_id
limit 5
