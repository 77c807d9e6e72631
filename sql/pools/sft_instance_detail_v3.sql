-- sft_instance_detail_v3: one row per source instance with the audit figures side by
-- side (issue 5 item 7; grows as the audit grows). Heuristic columns come from the
-- *_heuristic views and are named as such.
-- Grain key: instance_id.
-- Columns: the per-instance table (sft_instances_v2, including its outcome category:
--   resolved / unresolved / not graded / empty patch / infra failure) plus: split (manifest), protected
--   (family on the protected list), git_history_commands, first_write_turn_heuristic,
--   test_runs_heuristic, pass_after_last_write_heuristic, recovery_window_heuristic,
--   changed_command_pass_heuristic, thinking_bodies, long_repetition, final_report.
-- sft_instance_detail_v2's rows read from sft_instances_v2 (issue 31: an infra failure is
-- never unresolved; infra_failure_reason added); it runs on Spark too (docs/spark.md).
select
    i.*,
    sm.split,
    coalesce(pf.family is not null, false) as protected,
    (select count(*) from sft_commands as c where c.instance_id = i.instance_id and c.git_history) as git_history_commands,
    tr.first_write_turn as first_write_turn_heuristic,
    tr.test_runs as test_runs_heuristic,
    tr.pass_after_last_write as pass_after_last_write_heuristic,
    tr.recovery_pass_index is not null as recovery_window_heuristic,
    rw.changed_command_pass as changed_command_pass_heuristic,
    (select count(*) from sft_messages as m where m.instance_id = i.instance_id and m.reasoning is not null) as thinking_bodies,
    (select count(*) from sft_messages as m where m.instance_id = i.instance_id and m.long_repetition) as long_repetition,
    fr.status as final_report
from sft_instances_v2 as i
left join sft_split_manifest as sm using (instance_id)
left join sft_protected_families as pf on pf.family = i.family
left join sft_test_runs_heuristic_v1 as tr using (instance_id)
left join sft_recovery_windows_heuristic_v2 as rw using (instance_id)
left join sft_final_report_v1 as fr using (instance_id)
