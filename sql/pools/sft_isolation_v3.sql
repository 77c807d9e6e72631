-- sft_isolation_v3: repository families of the SFT corpus and their overlap with the
-- protected (held-out benchmark) families (SPEC §3.4 isolation), with each instance counted
-- once however many trajectories it has (issue 27: sft_isolation_v2 counted an instance's
-- later attempts, keyed '<instance>#<n>', and the views `views build` renders from them, as
-- instances of their own). Runs on Spark too, as v2 (README "Beyond one machine").
-- Grain key: family.
-- Grain: family (one row per family with a view or a trajectory; '(undetermined)'
--   gathers the instances whose family neither the data nor the id's scheme names:
--   src/sft/family.rs, README "Repository families").
-- Columns: family; instances (distinct SWE-bench instances: a trajectory's instance, a
--   view's through the trajectory its instance_id names, else the view's instance_id);
--   trajectories (loaded trajectories of the family, every attempt); views; training_views
--   (views of training pools, sft_training_views_v1); protected (the family is on the
--   protected list: an exact-name intersection, no fuzzy matching; null for
--   '(undetermined)': whether those instances come from a protected repository cannot be
--   told, so they are never counted as unprotected).
with instances as (
    select coalesce(t.instance, v.instance_id) as instance, v.family
    from sft_views as v
    left join sft_trajectories as t on t.instance_id = v.instance_id
    union
    select instance, family from sft_trajectories
),
families as (
    select family, count(distinct instance) as instances
    from instances
    group by family
),
trajectories as (
    select family, count(*) as trajectories from sft_trajectories group by family
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
    coalesce(tr.trajectories, 0) as trajectories,
    coalesce(v.views, 0) as views,
    coalesce(v.training_views, 0) as training_views,
    case when f.family is null then null else p.family is not null end as protected
from families as f
left join trajectories as tr on tr.family is not distinct from f.family
left join views as v on v.family is not distinct from f.family
left join sft_protected_families as p on p.family = f.family
