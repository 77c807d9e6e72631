-- sft_instances_v2: sft_instances_v1 with the evaluator's outcome classes (issue 31): an
-- instance whose report.json says the environment broke (`infra_failure: true`, SWE-bench PR
-- #594) is never a model failure, and one whose prediction had no patch (`patch_is_None`) is
-- named so.
-- Grain key: instance_id.
-- Grain: instance_id (every instance that has a trajectory or a view), as sft_instances_v1.
-- Columns: those of sft_instances_v1, with
--   resolved: null for an infra failure (the grade says nothing of the model), else as v1;
--   outcome: 'infra failure' (the report's infra_failure is true) | 'empty patch' (its
--     patch_is_None is true) | v1's 'resolved' / 'unresolved' / 'not graded' | null: no report;
--   and infra_failure_reason: the report's infra_failure_reason, when given (also written for
--     an ambiguous signature whose infra_failure is false).
select
    i.instance_id, i.family, i.source, i.pools, i.views, i.report_only_views, i.tokens, i.supervised_tokens,
    i.report_only_supervised_tokens, i.assistant_messages, i.assistant_messages_kept, i.assistant_messages_masked,
    i.tool_calls_bash, i.tool_calls_read, i.tool_calls_edit, i.tool_calls_search, i.tool_calls_submit,
    i.tool_calls_other,
    case when o.infra_failure then null else i.resolved end as resolved,
    i.resolved_by,
    i.fail_to_pass,
    i.pass_to_pass_passed,
    case
        when o.infra_failure then 'infra failure'
        when o.empty_patch then 'empty patch'
        else i.outcome
    end as outcome,
    o.infra_failure_reason
from sft_instances_v1 as i
left join sft_outcomes as o using (instance_id)
