-- sft_instance_detail_v4: one row per SWE-bench instance with the audit figures side by
-- side (issue 5 item 7), over every trajectory of the instance (issue 27: several attempts
-- of one instance are kept, sft_attempts_v1; sft_instance_detail_v3 gave each later attempt,
-- keyed '<instance>#<n>', a row of its own and read the first attempt's figures only).
-- Heuristic columns come from the *_heuristic views and are named as such.
-- Grain key: instance_id.
-- Columns: the per-instance table (sft_instances_v3: its trajectories, resolved and
--   unresolved trajectories and outcome category) plus: split (manifest), protected (family
--   on the protected list), and over the instance's attempts: git_history_commands,
--   thinking_bodies, long_repetition (summed); first_write_turn_heuristic (the earliest of
--   the attempts'); test_runs_heuristic (summed); pass_after_last_write_heuristic,
--   recovery_window_heuristic, changed_command_pass_heuristic (true when some attempt
--   shows it); final_report (the best status an attempt's final report has: supervised,
--   then masked, report-only, absent). With one trajectory per instance, the figures of
--   sft_instance_detail_v3.
with git as (
    select t.instance as instance_id, count(*) as git_history_commands
    from sft_commands as c join sft_trajectories as t using (instance_id)
    where c.git_history
    group by t.instance
),
thinking as (
    select t.instance as instance_id,
           count(*) filter (where m.reasoning is not null) as thinking_bodies,
           count(*) filter (where m.long_repetition) as long_repetition
    from sft_messages as m join sft_trajectories as t using (instance_id)
    group by t.instance
),
runs as (
    select t.instance as instance_id,
           min(tr.first_write_turn) as first_write_turn,
           sum(tr.test_runs) as test_runs,
           bool_or(tr.pass_after_last_write) as pass_after_last_write,
           bool_or(tr.recovery_pass_index is not null) as recovery_window
    from sft_test_runs_heuristic_v1 as tr join sft_trajectories as t using (instance_id)
    group by t.instance
),
windows as (
    select t.instance as instance_id, bool_or(rw.changed_command_pass) as changed_command_pass
    from sft_recovery_windows_heuristic_v2 as rw join sft_trajectories as t using (instance_id)
    group by t.instance
),
finals as (
    select t.instance as instance_id,
           min(case fr.status when 'supervised' then 1 when 'masked' then 2 when 'report-only' then 3 else 4 end) as rank
    from sft_final_report_v1 as fr join sft_trajectories as t using (instance_id)
    group by t.instance
)
select
    i.*,
    sm.split,
    coalesce(pf.family is not null, false) as protected,
    coalesce(g.git_history_commands, 0) as git_history_commands,
    r.first_write_turn as first_write_turn_heuristic,
    r.test_runs as test_runs_heuristic,
    r.pass_after_last_write as pass_after_last_write_heuristic,
    coalesce(r.recovery_window, false) as recovery_window_heuristic,
    w.changed_command_pass as changed_command_pass_heuristic,
    coalesce(th.thinking_bodies, 0) as thinking_bodies,
    coalesce(th.long_repetition, 0) as long_repetition,
    case f.rank when 1 then 'supervised' when 2 then 'masked' when 3 then 'report-only' when 4 then 'absent' end
        as final_report
from sft_instances_v3 as i
left join sft_split_manifest as sm using (instance_id)
left join sft_protected_families as pf on pf.family = i.family
left join git as g using (instance_id)
left join thinking as th using (instance_id)
left join runs as r using (instance_id)
left join windows as w using (instance_id)
left join finals as f using (instance_id)
