-- eval_pair_bootstrap_at_v1(resamples, seed): a paired bootstrap interval of the difference
-- in resolve rate of two runs on the instances both graded (issue 31; SPEC §3.5), seeded and
-- reproducible: the same arguments give the same interval in any DuckDB client.
-- Resampling: per pair, the shared instances (eval_pair_instances_v2.shared) are numbered
--   t = 0 .. n-1 by instance_id; draw t of resample b = 0 .. resamples-1 takes instance
--   floor(h * n / 2^32), h = fmix32((k * 2654435761) mod 2^32), k = seed + b * n + t, where
--   fmix32 is MurmurHash3's 32-bit finalizer (x ^= x >> 16; x *= 0x85ebca6b; x ^= x >> 13;
--   x *= 0xc2b2ae35; x ^= x >> 16, each product mod 2^32): a fixed, documented generator, so
--   another implementation draws the same instances; each resample's difference is the mean
--   of a_resolved - b_resolved over its n draws.
-- Grain key: run_a, run_b.
-- Grain: one row per pair of runs (run_a < run_b) with a shared graded instance.
-- Columns: shared (n); difference (a's rate - b's on the shared instances); resamples; seed;
--   ci_low, ci_high: the 2.5th and 97.5th percentiles of the resampled differences
--   (quantile_cont: linear interpolation between order statistics); excludes_zero: the
--   interval lies wholly above or below 0.
-- Parameters: resamples INTEGER (>= 1); seed INTEGER (>= 0).
create or replace macro eval_pair_bootstrap_at_v1(resamples integer, seed integer) as table
select * from (
    with shared as (
        select
            run_a,
            run_b,
            (case when a_resolved then 1 else 0 end) - (case when b_resolved then 1 else 0 end) as d,
            row_number() over (partition by run_a, run_b order by instance_id) - 1 as t,
            count(*) over (partition by run_a, run_b) as n
        from eval_pair_instances_v2
        where shared
    ),
    pairs as (
        select run_a, run_b, any_value(n) as n, avg(d) as difference from shared group by run_a, run_b
    ),
    keys as (
        select p.run_a, p.run_b, p.n, r.b, s.t, (seed::hugeint + r.b * p.n + s.t) * 2654435761 % 4294967296 as h1
        from pairs as p
        cross join range(0, resamples) as r(b)
        join shared as s on s.run_a = p.run_a and s.run_b = p.run_b
    ),
    mix1 as (
        select run_a, run_b, n, b, t, xor(h1, h1 >> 16) * 2246822507 % 4294967296 as h3 from keys
    ),
    mix2 as (
        select run_a, run_b, n, b, t, xor(h3, h3 >> 13) * 3266489909 % 4294967296 as h5 from mix1
    ),
    draws as (
        select run_a, run_b, n, b, t, (xor(h5, h5 >> 16) * n) >> 32 as pick from mix2
    ),
    resampled as (
        select w.run_a, w.run_b, w.b, avg(x.d) as difference
        from draws as w
        join shared as x on x.run_a = w.run_a and x.run_b = w.run_b and x.t = w.pick
        group by w.run_a, w.run_b, w.b
    ),
    bounds as (
        select run_a, run_b, quantile_cont(difference, 0.025) as ci_low, quantile_cont(difference, 0.975) as ci_high
        from resampled
        group by run_a, run_b
    )
    select
        p.run_a,
        p.run_b,
        p.n as shared,
        p.difference,
        resamples as resamples,
        seed as seed,
        b.ci_low,
        b.ci_high,
        b.ci_low > 0 or b.ci_high < 0 as excludes_zero
    from pairs as p
    join bounds as b on b.run_a = p.run_a and b.run_b = p.run_b
)
order by run_a, run_b
