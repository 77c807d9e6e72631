-- 0013 evaluation runs (SPEC §3.5, issue 11): named runs of an agent on a task set, their
-- trajectories reduced to stored heuristic verdicts, and evaluator outcomes in every shape
-- read (per-instance report.json, run-level id lists, batch exit statuses). A run's
-- trajectories live here, not in sft_trajectories: the same instance appears in many runs.

-- One row per run.
create table eval_run_specs (
    run        varchar primary key,    -- the name given to `load run NAME`
    model      varchar not null,
    harness    varchar,                -- e.g. 'mini-swe-agent 1.15.0' (null: not given)
    continues  varchar,                -- the run this one continues or resumes (null: not declared)
    runaway_n  integer not null,       -- N of the runaway-turns heuristic its verdicts were computed with
    created_at timestamp not null default current_timestamp
);

-- One row per trajectory of a run, with its finish and heuristic verdicts (src/eval/symptoms.rs).
create table eval_trajectories (
    run                     varchar not null,
    instance_id             varchar not null,
    source                  varchar not null,  -- trajectory format (sft_trajectories.source values)
    exit_status             varchar,           -- as the trajectory records it (null: none recorded)
    finish                  varchar not null,  -- natural / limit / error / cut_off (src/eval/symptoms.rs)
    assistant_turns         integer not null,
    turns_before_first_edit integer,           -- assistant turns before the first editing turn (null: no edit)
    git_history_commands    integer not null,  -- shell commands running git log/show/blame/rev-list/reflog
    long_repetition         boolean not null,  -- an assistant text or thinking body >= 3,000 chars, zlib ratio < 0.1
    length_finishes         integer not null,  -- model responses recorded with finish_reason 'length'
    token_limit             boolean not null,  -- length_finishes > 0 or an exit status naming the context window
    runaway                 boolean not null,  -- >= eval_run_specs.runaway_n assistant turns before any edit
    pass_after_last_edit    boolean not null,  -- the last passing test run follows the last file write
    declared_resolved       boolean,           -- the trajectory file's own resolved flag (null: none)
    file_id                 integer not null,
    record                  integer not null,  -- 1-based row in the file
    primary key (run, instance_id)
);

-- Explicit evaluator outcomes: one row per (run, instance, file that states it).
create table eval_outcomes (
    run         varchar not null,
    instance_id varchar not null,
    status      varchar not null,      -- resolved / unresolved / error
    shape       varchar not null,      -- swebench-report / sb-cli-instance / sb-cli-run / harness-summary / trajectory
    file_id     integer not null,
    primary key (run, instance_id, file_id)
);

-- Run-level reports that list ids: an instance of the run listed in none of them is
-- implied unresolved (the views say so).
create table eval_listings (
    run     varchar not null,
    file_id integer not null,
    shape   varchar not null,          -- sb-cli-run / harness-summary
    primary key (run, file_id)
);

-- mini-swe-agent batch exit statuses: one row per (batch file, instance).
create table eval_exit_statuses (
    run         varchar not null,
    batch       varchar not null,      -- the batch file's name, e.g. exit_statuses_1763506501.7698028.yaml
    batch_time  double,                -- the unix time in that name (null: none), the batch order
    instance_id varchar not null,
    exit_status varchar not null,      -- e.g. Submitted, RetryError, LimitsExceeded
    file_id     integer not null,
    primary key (run, file_id, instance_id)
);
