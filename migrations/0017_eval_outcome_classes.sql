-- 0017 evaluation outcome classes (issue 31): the SWE-bench harness run report (schema
-- version 2: empty_patch_ids, incomplete_ids, infra_failure_ids, ambiguous_failure_ids,
-- failure_reasons) and report.json's infra_failure are kept, never read as unresolved; and
-- a run report's own run-level counts are kept, so a count-only sb-cli report (sb-cli#27)
-- and a report over the whole benchmark state their population.

-- eval_outcomes.status gains empty_patch / infra_failure / not_run besides
-- resolved / unresolved / error (src/eval/files.rs Status); what a file says beside the
-- class is kept here, one row per outcome row that has it.
create table eval_outcome_notes (
    run         varchar not null,
    instance_id varchar not null,
    file_id     integer not null,
    reason      varchar,            -- failure_reasons[id] / report.json infra_failure_reason (null: none)
    ambiguous   boolean not null,   -- in ambiguous_failure_ids: a broken environment or a bad patch, unknown which
    primary key (run, instance_id, file_id)
);

-- One row per run-level report that states counts (harness run report, sb-cli report,
-- count-only sb-cli report); each count as the report gives it (null: not given).
create table eval_run_reports (
    run               varchar not null,
    file_id           integer not null,
    shape             varchar not null,   -- swebench-run-report / sb-cli-run / sb-cli-counts
    schema_version    integer,
    per_instance      boolean not null,   -- false: counts only, no instance ids (sb-cli#27)
    total             integer,            -- total_instances: the benchmark's instances (the harness's population)
    submitted         integer,            -- submitted_instances: predictions given to the harness
    completed         integer,            -- completed_instances
    resolved          integer,            -- resolved_instances
    unresolved        integer,            -- unresolved_instances
    empty_patch       integer,            -- empty_patch_instances
    error             integer,            -- error_instances
    failed            integer,            -- failed_instances (sb-cli)
    infra_failure     integer,            -- infra_failure_instances (SWE-bench #594)
    ambiguous_failure integer,            -- ambiguous_failure_instances
    pending           integer,            -- pending_instances (sb-cli)
    incomplete        integer,            -- incomplete_instances (when given)
    primary key (run, file_id)
);
