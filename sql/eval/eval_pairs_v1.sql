-- eval_pairs_v1: every two runs on their shared instances, with an exact McNemar test
-- (SPEC §3.5, issue 11).
-- Grain key: run_a, run_b.
-- Grain: one row per (run_a, run_b), run_a < run_b by name, sharing at least one instance
--   with an outcome in both (eval_pair_instances_v1 lists them).
-- Columns: shared (instances); both_resolved, only_a, only_b, neither (resolved by both / A only /
--   B only / neither; they add up to shared); a_resolved, b_resolved (k of shared);
--   discordant = only_a + only_b;
--   mcnemar_p: exact two-sided McNemar p on the discordant pairs: with d = discordant and
--     m = min(only_a, only_b), p = min(1, 2 * sum_{i=0..m} C(d, i) / 2^d) (binomial test of
--     only_a against Binomial(d, 1/2)); 1 when d = 0. C(d, i) / 2^d is computed as
--     exp(lgamma(d+1) - lgamma(i+1) - lgamma(d-i+1) - d*ln 2) in double precision (relative
--     error about 1e-13).
with cells as (
    select
        run_a,
        run_b,
        count(*) as shared,
        count(*) filter (where cell = 'both') as both_resolved,
        count(*) filter (where cell = 'only_a') as only_a,
        count(*) filter (where cell = 'only_b') as only_b,
        count(*) filter (where cell = 'neither') as neither
    from eval_pair_instances_v1
    group by run_a, run_b
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
    only_a + only_b as discordant,
    (select least(1.0, 2 * sum(exp(lgamma(c.only_a + c.only_b + 1) - lgamma(i + 1)
                                   - lgamma(c.only_a + c.only_b - i + 1) - (c.only_a + c.only_b) * ln(2))))
       from range(0, least(c.only_a, c.only_b) + 1) as r(i)) as mcnemar_p
from cells as c
order by run_a, run_b
