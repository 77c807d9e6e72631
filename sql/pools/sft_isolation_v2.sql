-- sft_isolation_v2: repository families of the SFT corpus and their overlap with the
-- protected (held-out benchmark) families (SPEC §3.4 isolation). Same rows as
-- sft_isolation_v1, written without correlated scalar subqueries beside an aggregate
-- (Spark SQL refuses those), so it runs on Spark too (README "Beyond one machine").
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
),
families as (
    select family, count(distinct instance_id) as instances
    from instances
    group by family
),
views as (
    select v.family, count(*) as views, count(t.view_id) as training_views
    from sft_views as v
    left join (select distinct view_id from sft_training_views_v1) as t on t.view_id = v.view_id
    group by v.family
)
select
    coalesce(f.family, '(undetermined)') as family,
    f.instances,
    coalesce(v.views, 0) as views,
    coalesce(v.training_views, 0) as training_views,
    case when f.family is null then null else p.family is not null end as protected
from families as f
left join views as v on v.family is not distinct from f.family
left join sft_protected_families as p on p.family = f.family
