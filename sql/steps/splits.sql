-- split step: membership of every example a version keeps, for one org (SPEC §2.4).
-- Parameters: $1 version; $2 org.
-- Each kept example goes to the registered window its created_at falls in ('(none)' when
-- none does), with its registered half by project (null when in neither half).
insert into review_splits
select
    r.version,
    r.org,
    r.example_id,
    coalesce(w.window_name, '(none)') as split,
    h.half,
    e.suffix,
    coalesce(w.sealed, false) as sealed,
    coalesce(w.is_training, false) as is_training,
    case
        when w.window_name is null then 'created_at outside every registered window'
        else concat('created_at in [', strftime(w.starts_at, '%Y-%m-%d %H:%M:%S'), ', ',
                    strftime(w.ends_at, '%Y-%m-%d %H:%M:%S'), ')')
    end as rule
from refine_examples as r
join review_examples as e on e.example_id = r.example_id
left join org_windows as w on w.org = e.org and e.created_at >= w.starts_at and e.created_at < w.ends_at
left join org_halves as h on h.org = e.org and h.project = e.project
where r.version = $1 and r.org = $2 and r.kept
