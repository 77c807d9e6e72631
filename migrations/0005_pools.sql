-- 0005 pools: pool names and roles are configuration, not code (SPEC §3, issue 5).

-- One row per configured pool. role: repair (dedup unions these), recovery (kept apart,
-- re-weights a stretch of a repair trajectory), report (report-only, listed apart).
-- label_subset: a behaviour-labelled subset of another pool (membership shares).
create table sft_pool_roles (
    pool         varchar primary key,
    role         varchar not null check (role in ('repair', 'recovery', 'report')),
    label_subset boolean not null,
    file_id      integer not null
);

-- Split manifest: instance -> train / dev (SPEC §3.1), from a JSON file.
create table sft_split_manifest (
    instance_id varchar primary key,
    split       varchar not null,
    file_id     integer not null
);

-- Protected families: repositories of a held-out benchmark (SPEC §3.1, §3.4 isolation).
create table sft_protected_families (
    family  varchar primary key,
    file_id integer not null
);

-- Evaluator samples from a samples database (SQLite, read-only): one row per instance.
create table sft_samples (
    instance_id   varchar primary key,
    success       boolean not null,
    finish_reason varchar,             -- natural | max_steps | ...
    fail_to_pass  integer,             -- declared fail-to-pass test nodes
    pass_to_pass  integer,             -- declared pass-to-pass test nodes
    file_id       integer not null
);
