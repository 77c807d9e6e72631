-- 0016 checks (issue 26): every `sphragis check` run and every result it judged, passes
-- and not-run checks included, so a check's history survives the corpus it audits; and
-- every `verify --reproduce` outcome, which the check frozen_version_verifies reads.

-- One row per `sphragis check` run that was recorded (not `--no-record`).
create sequence check_run_id start 1;
create table check_runs (
    run_id          integer primary key default nextval('check_run_id'),
    checked_at      timestamp not null,  -- UTC, when the findings were read
    code_version    varchar not null,    -- sphragis::CODE_VERSION of the binary that judged
    corpus_versions varchar[] not null,  -- corpus versions in the database then, sorted
    inputs_sha256   varchar not null,    -- SHA-256 over the ingest log's file SHA-256s in file_id order
    config_sha256   varchar,             -- SHA-256 of the checks.toml bytes; null: the defaults
    options         varchar not null,    -- JSON: max_length, side, only, version, baseline, fail_on
    fail_on         varchar not null,    -- error | warn: the lowest status that made the run fail
    failed          boolean not null     -- a result at or above fail_on: exit 4
);

-- One row per check and scope of a recorded run, every status.
create table check_results (
    run_id      integer not null,
    check_name  varchar not null,
    area        varchar not null,        -- review | sft | eval | ingest
    severity    varchar not null,        -- error | warn | info, after checks.toml
    scope       varchar not null,        -- e.g. 'pool=A', 'version=v3 org=qt', 'run=ft1', 'corpus'
    tested      bigint,                  -- rows examined; null when not run
    failing     bigint,                  -- rows failing; null when not run
    share       double,                  -- failing / tested; null when not run
    error_if    varchar,                 -- the conditions judged, e.g. 'failing > 0'
    warn_if     varchar,
    status      varchar not null,        -- pass | info | warn | fail | not-run
    reason      varchar,                 -- why not run, or what was only partly tested
    drill_down  varchar,                 -- SQL listing the failing rows
    primary key (run_id, check_name, scope)
);

-- One row per `sphragis verify --reproduce` of a frozen version.
create table verifications (
    version       varchar not null,
    verified_at   timestamp not null,    -- UTC
    code_version  varchar not null,
    clean         boolean not null,      -- no difference: the version reproduces
    differences   integer not null,      -- differences found (an input changed or gone counts 1)
    first_difference varchar             -- the first, as verify printed it; null when clean
);
