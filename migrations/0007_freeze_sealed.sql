-- 0007 freeze and sealed: where a frozen version's files live, what freeze left out, and
-- which examples' content is kept in the sealed companion database (issue 8 §3b, SPEC §1.6).

-- One row per version frozen by this schema: the folder its files were written to, so
-- `verify --reproduce` checks the files a user quotes (or the folder given with --frozen).
create table frozen_versions (
    version   varchar primary key,
    folder    varchar not null,    -- absolute path of freeze's --out folder
    selection varchar not null,    -- 'all': every org with kept examples was frozen;
                                   -- 'orgs': only the orgs named with --org;
                                   -- 'allow-partial': orgs without a split left out by --allow-partial
    frozen_at timestamp not null
);

-- One row per file freeze wrote: its name in the folder and the SHA-256 and size of its bytes.
-- A criteria file is renamed split-criteria-<org>-<version>.json when a newer version is
-- frozen into the same folder; verify looks for that name first.
create table frozen_files (
    version   varchar not null,
    org       varchar not null,
    role      varchar not null,    -- 'manifest' or 'criteria'
    file_name varchar not null,    -- as written: manifest-<org>-<version>.json, split-criteria-<org>.json
    sha256    varchar not null,    -- lowercase hex SHA-256 of the bytes written
    bytes     bigint not null,     -- size in bytes
    primary key (version, org, role)
);
-- Versions frozen before this migration: the recorded texts are the bytes freeze wrote.
insert into frozen_files
select version, org, 'manifest', 'manifest-' || org || '-' || version || '.json', sha256(manifest_json), strlen(manifest_json)
from frozen_manifests;
insert into frozen_files
select version, org, 'criteria', 'split-criteria-' || org || '.json', sha256(criteria_json), strlen(criteria_json)
from frozen_manifests;

-- Orgs with kept examples that a freeze left out (no manifest, no criteria file), by
-- explicit choice (--org list or --allow-partial).
create table frozen_exclusions (
    version       varchar not null,
    org           varchar not null,
    kept_examples bigint not null, -- examples of the org the version keeps
    reason        varchar not null, -- 'no split computed' or 'not named with --org'
    primary key (version, org)
);

-- Examples whose content (hunk, target, comment messages) is kept in the sealed companion
-- database <db>.sealed.duckdb instead of this file (ids and window only, never content).
-- Their rows stay in review_examples / review_comments with hunk and target null and the
-- message empty, so every count still counts them.
create table sealed_content (
    example_id  varchar primary key,
    org         varchar not null,
    window_name varchar not null,  -- the sealed window its created_at fell in when it was sealed
    sealed_at   timestamp not null
);
