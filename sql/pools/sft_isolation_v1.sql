-- sft_isolation_v1: repository families of the SFT corpus and their overlap with the
-- protected (held-out benchmark) families (SPEC §3.4 isolation).
-- Grain: one row per family with a view or a trajectory.
-- Columns: family; instances; views; training_views (views of pools not marked
--   report-only); protected (the family is on the protected list: an exact-name
--   intersection, no fuzzy matching).
with instances as (
    select instance_id, family from sft_views
    union
    select instance_id, family from sft_trajectories
)
select
    coalesce(i.family, '(none)') as family,
    count(distinct i.instance_id) as instances,
    (select count(*) from sft_views as v where v.family is not distinct from i.family) as views,
    (select count(*) from sft_views as v left join sft_pool_roles as p on p.pool = v.pool
      where v.family is not distinct from i.family and (p.role is null or p.role <> 'report')) as training_views,
    bool_or(p.family is not null) as protected
from instances as i
left join sft_protected_families as p on p.family = i.family
group by i.family
