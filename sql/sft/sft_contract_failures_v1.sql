-- sft_contract_failures_v1: every failing view with its check, position and reason
-- (SPEC §3.2: every failure is kept).
-- Grain key: view_id, check_name.
-- Grain: one row per (view, failed check).
select view_id, pool, instance_id, check_name, position, detail
from sft_contract_v1
where not passed
