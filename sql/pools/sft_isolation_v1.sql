-- sft_isolation_v1: repository families of the SFT corpus and their overlap with the
-- protected (held-out benchmark) families (SPEC §3.4 isolation).
-- Grain key: family.
-- Grain: family (one row per family with a view or a trajectory; '(undetermined)'
--   gathers the instances whose family neither the data nor the id's scheme names:
--   src/sft/family.rs, README "Repository families").
-- Columns: family; instances; views; training_views (views of training pools,
--   sft_training_views_v1); protected (the family is on the protected list: an exact-name
--   intersection, no fuzzy matching; null for '(undetermined)': whether those instances
--   come from a protected repository cannot be told, so they are never counted as
--   unprotected).
with instances as (
    select instance_id, family from sft_views
    union
    select instance_id, family from sft_trajectories
)
select
    coalesce(i.family, '(undetermined)') as family,
    count(distinct i.instance_id) as instances,
    (select count(*) from sft_views as v where v.family is not distinct from i.family) as views,
    (select count(*) from sft_views as v semi join sft_training_views_v1 as t using (view_id)
      where v.family is not distinct from i.family) as training_views,
    case when i.family is null then null else bool_or(p.family is not null) end as protected
from instances as i
left join sft_protected_families as p on p.family = i.family
group by i.family
