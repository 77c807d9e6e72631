-- 0001 core: input binding (ingest log), view registry, command log.
-- Applied once per database file; recorded in sph_migrations with this file's SHA-256.

-- One row per input file loaded (SPEC §1 principle 4). The same bytes of the same kind
-- are loaded once: a second load finds the SHA-256 here and is reported, not doubled.
create sequence ingest_file_id start 1;
create table ingest_log (
    file_id        integer primary key default nextval('ingest_file_id'),
    kind           varchar not null,   -- loader: examples, review4repair, tufano2021, gerrit-query, orgs
    path           varchar not null,   -- absolute path at load time
    bytes          bigint not null,    -- file size in bytes
    sha256         varchar not null,   -- lowercase hex SHA-256 of the file bytes
    rows           bigint not null,    -- records written (examples, config entries, ...)
    loader_version varchar not null,   -- '<loader>/<n>', bumped when a loader's mapping changes
    options        varchar,            -- loader options that change the mapping, as JSON
    loaded_at      timestamp not null default current_timestamp
);

-- Every view sphragis created, with the SHA-256 of its SQL file (SPEC §1 principle 2).
-- A recorded view whose file changed is refused on open: a change of meaning is a new version.
create table sph_views (
    name          varchar primary key, -- e.g. refine_removals_v1
    base_name     varchar not null,    -- e.g. refine_removals (the pointer view's name)
    version       integer not null,
    sha256        varchar not null,    -- of the SQL file, CRLF normalized to LF
    source        varchar not null,    -- path of the file in the sphragis source tree
    registered_at timestamp not null default current_timestamp
);

-- Commands that changed the file or opened guarded rows (loads, skips, refines, unseals).
create table sph_log (
    logged_at timestamp not null default current_timestamp,
    command varchar not null,
    detail  varchar not null
);
