-- eval_instance_repos_v1: the repository of every instance a run names (issue 31), the
-- cluster of the repo-clustered intervals: SWE-bench instances of one repository share its
-- code, tests and maintainers, so their outcomes are not independent draws.
-- Rule (the family rule of src/sft/family.rs, in SQL): a SWE-smith id
--   `<owner>__<repo>.<commit>.<suffix>` (commit: the first later dot-separated segment of 7-40
--   hex digits) → `<owner>__<repo>`; else a SWE-bench id `<owner>__<repo>-<number>`, optionally
--   `_<k>` → `<owner>__<repo>`; else the repository is unknown and the instance is its own
--   cluster (repo = the instance id, repo_known false).
-- Grain key: instance_id.
-- Grain: one row per instance named by any run (eval_instances_v2).
-- Columns: repo; repo_known.
with ids as (
    select distinct instance_id from eval_instances_v2
),
schemes as (
    select
        instance_id,
        regexp_extract(instance_id, '^([^.]+(?:\.[^.]*)*?)\.[0-9A-Fa-f]{7,40}(?:\.|$)', 1) as swe_smith,
        regexp_extract(instance_id, '^(.+)-[0-9]+(?:_[^-]*)?$', 1) as swe_bench
    from ids
),
named as (
    select
        instance_id,
        case
            when contains(swe_smith, '__') then swe_smith
            when swe_bench <> '' then swe_bench
        end as family
    from schemes
)
select instance_id, coalesce(family, instance_id) as repo, family is not null as repo_known
from named
order by instance_id
