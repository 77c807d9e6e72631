-- sft_contract_summary_v1: pass/fail per pool and contract check (SPEC §3.2).
-- Grain key: pool, check_name.
-- Grain: one row per (pool, check_name). Columns: views; passed; failed; not_checked
--   (the check could not be made: no tokenizer, no ledger, no declared file).
select
    pool,
    check_name,
    count(*) as views,
    count(*) filter (where passed) as passed,
    count(*) filter (where not passed) as failed,
    count(*) filter (where passed is null) as not_checked
from sft_contract_v1
group by pool, check_name
