-- eval_pairs_v2: two runs compared on the instances both graded, with the attrition stated,
-- Holm-adjusted p-values across every pair compared, and a verdict nobody can over-read
-- (issue 31; SPEC §3.5).
-- Grain key: run_a, run_b.
-- Grain: one row per pair of runs (run_a < run_b) with an instance named by either.
-- Columns:
--   shared: instances graded in both (eval_pair_instances_v2.shared); both_resolved, only_a,
--     only_b, neither: its 2x2 table; a_resolved, b_resolved: resolved on the shared instances;
--   a_rate_shared, b_rate_shared: those over shared; difference = a_rate_shared - b_rate_shared;
--   graded_in_a_only, graded_in_b_only, graded_in_neither: the attrition (instances named by
--     either run that one of them, or both, did not grade);
--   discordant = only_a + only_b; mcnemar_p: exact two-sided McNemar p =
--     min(1, 2 * sum_{i=0}^{min(only_a, only_b)} C(discordant, i) / 2^discordant) (1 when
--     discordant = 0);
--   pairs_compared: the pairs with a shared instance (m of Holm's method); holm_p: Holm's
--     step-down adjusted p over those pairs: with the p-values sorted ascending, the j-th gets
--     max over i <= j of min(1, (m - i + 1) * p_(i)) (ties in p ordered by run_a, run_b);
--   verdict: a_better / b_better (holm_p < 0.05 and the difference has that sign) / tied (no
--     decisive evidence at 0.05) / no_shared_instances; verdict_text: the verdict in words, with
--     the run names, the rates on the shared instances, holm_p and the attrition.
with cells as (
    select
        run_a,
        run_b,
        count(*) filter (where shared) as shared,
        count(*) filter (where cell = 'both') as both_resolved,
        count(*) filter (where cell = 'only_a') as only_a,
        count(*) filter (where cell = 'only_b') as only_b,
        count(*) filter (where cell = 'neither') as neither,
        count(*) filter (where cell = 'graded_in_a_only') as graded_in_a_only,
        count(*) filter (where cell = 'graded_in_b_only') as graded_in_b_only,
        count(*) filter (where cell = 'graded_in_neither') as graded_in_neither
    from eval_pair_instances_v2
    group by run_a, run_b
),
tested as (
    select
        c.*,
        (select least(1.0, 2 * sum(exp(lgamma(c.only_a + c.only_b + 1) - lgamma(r.i + 1)
                                       - lgamma(c.only_a + c.only_b - r.i + 1) - (c.only_a + c.only_b) * ln(2))))
           from range(0, least(c.only_a, c.only_b) + 1) as r(i)) as mcnemar_p
    from cells as c
),
ordered as (
    select
        *,
        sum(case when shared > 0 then 1 else 0 end) over () as pairs_compared,
        case when shared > 0 then row_number() over (partition by shared > 0 order by mcnemar_p, run_a, run_b) end as holm_rank
    from tested
),
adjusted as (
    select
        *,
        case when shared > 0 then
            max(least(1.0, (pairs_compared - holm_rank + 1) * mcnemar_p))
                over (partition by shared > 0 order by holm_rank rows between unbounded preceding and current row)
        end as holm_p
    from ordered
),
rated as (
    select
        *,
        case when shared > 0 then (both_resolved + only_a) / shared end as a_rate_shared,
        case when shared > 0 then (both_resolved + only_b) / shared end as b_rate_shared
    from adjusted
),
judged as (
    select
        *,
        case
            when shared = 0 then 'no_shared_instances'
            when holm_p < 0.05 and only_a > only_b then 'a_better'
            when holm_p < 0.05 and only_b > only_a then 'b_better'
            else 'tied'
        end as verdict
    from rated
)
select
    run_a,
    run_b,
    shared,
    both_resolved,
    only_a,
    only_b,
    neither,
    both_resolved + only_a as a_resolved,
    both_resolved + only_b as b_resolved,
    a_rate_shared,
    b_rate_shared,
    a_rate_shared - b_rate_shared as difference,
    graded_in_a_only,
    graded_in_b_only,
    graded_in_neither,
    only_a + only_b as discordant,
    mcnemar_p,
    pairs_compared,
    holm_p,
    verdict,
    case verdict
        when 'no_shared_instances' then format('{} and {} graded no instance in common: no comparison', run_a, run_b)
        when 'a_better' then format('{} better than {}: {} vs {} resolved of {} shared (Holm p {})', run_a, run_b,
                                    both_resolved + only_a, both_resolved + only_b, shared, round(holm_p, 4))
        when 'b_better' then format('{} better than {}: {} vs {} resolved of {} shared (Holm p {})', run_b, run_a,
                                    both_resolved + only_b, both_resolved + only_a, shared, round(holm_p, 4))
        else format('{} and {} tied: {} vs {} resolved of {} shared (Holm p {}); the ranking is not decisive evidence',
                    run_a, run_b, both_resolved + only_a, both_resolved + only_b, shared, round(holm_p, 4))
    end
    || case when graded_in_a_only + graded_in_b_only > 0
            then format('; left out: {} graded in {} only, {} in {} only', graded_in_a_only, run_a, graded_in_b_only, run_b)
            else '' end as verdict_text
from judged
order by run_a, run_b
