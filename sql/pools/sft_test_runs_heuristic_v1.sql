-- sft_test_runs_heuristic_v1: HEURISTIC test-run reading of each trajectory (SPEC §3.4
-- verification heuristics; rules in src/sft/heuristics.rs: test commands, file writes
-- including heredocs and edit tools, pass/fail summaries of pytest, unittest, Django,
-- tox and SymPy's bin/test). Not the evaluator's verdict.
-- Grain key: instance_id.
-- Grain: one row per trajectory.
-- Columns: assistant_turns; first_write_turn (1-based assistant turn of the first write;
--   null: no write); test_runs (assistant turns running a test command); passes / fails
--   (observations of test runs read as pass / fail); last_write_index, last_pass_index
--   (message indices); pass_after_last_write (the last pass comes after the last write);
--   first_fail_index and recovery_pass_index (the first failing test observation and the
--   first pass after it: a recovery window, null when there is none).
with m as (
    select *,
           case when role = 'assistant' then
               row_number() over (partition by instance_id, role = 'assistant' order by msg_index) end as turn
    from sft_messages
),
per as (
    select
        instance_id,
        count(*) filter (where role = 'assistant') as assistant_turns,
        min(turn) filter (where writes) as first_write_turn,
        count(*) filter (where runs_test) as test_runs,
        count(*) filter (where test_result = 'pass') as passes,
        count(*) filter (where test_result = 'fail') as fails,
        max(msg_index) filter (where writes) as last_write_index,
        max(msg_index) filter (where test_result = 'pass') as last_pass_index,
        min(msg_index) filter (where test_result = 'fail') as first_fail_index
    from m
    group by instance_id
)
select
    p.*,
    coalesce(p.last_pass_index > coalesce(p.last_write_index, -1), false) as pass_after_last_write,
    (select min(x.msg_index) from m as x
      where x.instance_id = p.instance_id and x.test_result = 'pass' and x.msg_index > p.first_fail_index) as recovery_pass_index
from per as p
