-- check_findings_at_v1(max_length, side): every check of the default suite with its verdict
-- under the default conditions (issue 26): the union of check_ingest_v1, check_review_v1,
-- check_sft_contract_v1, check_sft_pools_v1, check_sft_packs_v1, check_sft_attempts_v1,
-- check_sft_truncation_at_v1(max_length, side)
-- and check_eval_v1. `sphragis check` reads these rows, applies checks.toml (severity,
-- conditions, scopes, enabled) to the same figures and records what it judged in
-- check_results.
-- Parameters: max_length INTEGER (tokens) and side VARCHAR ('right' | 'left'): the training
--   length the truncation checks cut at.
-- Grain key: check_name, scope.
-- Grain: one row per (check, scope).
-- Columns:
--   check_name; area (review | sft | eval | ingest); severity (error | warn | info: the
--     default, which checks.toml may change);
--   scope: what the row judges, as key=value words ('pool=A', 'version=v3 org=qt
--     window=dev', 'run=ft1'), or 'corpus' / 'training pools' / 'recovery pools';
--   tested: rows examined (views, examples, instances, positions: the check says which);
--     null when the check could not run; failing: of those, rows failing;
--   share: failing / tested (0..1; null when not run);
--   error_if, warn_if: the conditions, '<failing|share> <op> <number>' with op one of
--     > >= < <= = != (null: none);
--   status: 'not-run' when tested is null or 0 (reason says why: never a pass); else 'fail'
--     when the severity is error and error_if holds; else 'warn' when the severity is error
--     or warn and warn_if holds (or, for severity warn, error_if holds); else 'info' when
--     the severity is info and either condition holds; else 'pass';
--   reason: why the check did not run, or what part of the scope it could not test;
--   detail: the figures behind the count, in words; drill_down: a query (stock DuckDB) that
--     lists the failing rows, or the rows behind the figure.
create or replace macro check_findings_at_v1(max_length integer, side varchar) as table
with checks as (
    select * from check_ingest_v1
    union all select * from check_review_v1
    union all select * from check_sft_contract_v1
    union all select * from check_sft_pools_v1
    union all select * from check_sft_packs_v1
    union all select * from check_sft_attempts_v1
    union all select * from check_sft_truncation_at_v1(max_length, side)
    union all select * from check_eval_v1
),
shared as (
    select *,
           case when tested > 0 then failing / tested end as share,
           regexp_extract(error_if, '^\s*(failing|share)?\s*(>=|<=|!=|>|<|=)\s*([0-9]+(\.[0-9]+)?)\s*$',
                          ['field', 'op', 'value']) as e,
           regexp_extract(warn_if, '^\s*(failing|share)?\s*(>=|<=|!=|>|<|=)\s*([0-9]+(\.[0-9]+)?)\s*$',
                          ['field', 'op', 'value']) as w
    from checks
),
held as (
    select *,
           coalesce(case e.op
               when '>' then (case e.field when 'share' then share else failing end) > try_cast(e.value as double)
               when '>=' then (case e.field when 'share' then share else failing end) >= try_cast(e.value as double)
               when '<' then (case e.field when 'share' then share else failing end) < try_cast(e.value as double)
               when '<=' then (case e.field when 'share' then share else failing end) <= try_cast(e.value as double)
               when '=' then (case e.field when 'share' then share else failing end) = try_cast(e.value as double)
               when '!=' then (case e.field when 'share' then share else failing end) <> try_cast(e.value as double)
           end, false) as error_holds,
           coalesce(case w.op
               when '>' then (case w.field when 'share' then share else failing end) > try_cast(w.value as double)
               when '>=' then (case w.field when 'share' then share else failing end) >= try_cast(w.value as double)
               when '<' then (case w.field when 'share' then share else failing end) < try_cast(w.value as double)
               when '<=' then (case w.field when 'share' then share else failing end) <= try_cast(w.value as double)
               when '=' then (case w.field when 'share' then share else failing end) = try_cast(w.value as double)
               when '!=' then (case w.field when 'share' then share else failing end) <> try_cast(w.value as double)
           end, false) as warn_holds
    from shared
)
select
    check_name, area, severity, scope, tested, failing, share, error_if, warn_if,
    case
        when tested is null or tested = 0 then 'not-run'
        when severity = 'error' and error_holds then 'fail'
        when severity = 'error' and warn_holds then 'warn'
        when severity = 'warn' and (error_holds or warn_holds) then 'warn'
        when severity = 'info' and (error_holds or warn_holds) then 'info'
        else 'pass'
    end as status,
    reason, detail, drill_down
from held
