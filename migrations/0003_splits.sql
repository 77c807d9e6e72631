-- 0003 splits: registered halves, split membership as data, frozen manifests, label audit
-- (SPEC §2.3-2.4).

-- The two registered halves of each org: which projects form half a and half b.
-- Replaced, like the windows, when an orgs file naming the org is loaded.
create table org_halves (
    org     varchar not null,
    half    varchar not null,          -- 'a' or 'b'
    project varchar not null,
    primary key (org, project)
);

-- One row per split computation: which registration (orgs file) it used. A split of a
-- version is never recomputed on another registration: that needs a new version.
create table split_runs (
    version              varchar not null,
    org                  varchar not null,
    registration_file_id integer not null, -- ingest_log.file_id of the orgs file used
    computed_at          timestamp not null,
    primary key (version, org)
);

-- Split membership: every example a version keeps, in the window its created_at falls in.
create table review_splits (
    version    varchar not null,
    org        varchar not null,
    example_id varchar not null,
    split      varchar not null,       -- window name; '(none)' when no window holds created_at
    half       varchar,                -- 'a' or 'b' by project; null when the project is in neither
    suffix     varchar not null,       -- copied from review_examples: the language of the mix
    sealed     boolean not null,       -- in the org's sealed test window
    is_training boolean not null,      -- in the org's training window
    rule       varchar not null,       -- why it is there, e.g. 'created_at in [2018-01-01, 2018-07-01)'
    primary key (version, example_id)
);

-- What freeze wrote for each org of a version: the manifest root and the criteria file.
create table frozen_manifests (
    version        varchar not null,
    org            varchar not null,
    root_sha256    varchar not null,   -- SHA-256 over "<split>\t<example_id>\n", sorted by split, id
    manifest_json  varchar not null,   -- the manifest file's exact text
    criteria_json  varchar not null,   -- the split-criteria file's exact text
    last_file_id   integer not null,   -- inputs with file_id <= this rebuild the version
    frozen_at      timestamp not null,
    primary key (version, org)
);

-- Label-audit items: a rater's verdict on one example (SPEC §2.3).
create table label_items (
    item_id    varchar not null,
    example_id varchar not null,
    rater      varchar not null,       -- A, B, human, ...
    label      varchar not null,       -- as given
    valid      boolean not null,       -- label is 'valid'
    file_id    integer not null,
    record     integer not null,
    primary key (item_id, rater)
);
