-- split step: membership of every example a version keeps, for one org (SPEC §2.4).
-- Parameters: $1 version; $2 org.
-- Each kept example goes to the window refine placed it in from the version's registration
-- ('(none)' when none holds it), with its registered half by project (null when in neither).
insert into review_splits
select
    r.version,
    r.org,
    r.example_id,
    coalesce(r.window_name, '(none)') as split,
    r.half,
    e.suffix,
    r.window_sealed as sealed,
    r.window_training as is_training,
    case
        when w.window_name is null then 'created_at outside every registered window'
        else concat('created_at in [', strftime(w.starts_at, '%Y-%m-%d %H:%M:%S'), ', ',
                    strftime(w.ends_at, '%Y-%m-%d %H:%M:%S'), ')')
    end as rule
from refine_examples as r
join review_examples as e on e.example_id = r.example_id
left join org_windows as w on w.org = r.org and w.window_name = r.window_name
where r.version = $1 and r.org = $2 and r.kept
