-- 0009 outcomes graded: an evaluator report that graded no test (SWE-bench writes no
-- tests_status when the patch was None or did not apply) stores NULL test-node counts,
-- not 0: ungraded is not "zero tests passed" (issue 9). A row is graded iff its
-- fail_to_pass_success is not null. Rows loaded before 0009 keep the 0s they got.
alter table sft_outcomes alter column fail_to_pass_success drop not null;
alter table sft_outcomes alter column fail_to_pass_failure drop not null;
alter table sft_outcomes alter column pass_to_pass_success drop not null;
alter table sft_outcomes alter column pass_to_pass_failure drop not null;
