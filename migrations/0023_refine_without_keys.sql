-- 0023 refine tables without primary keys (issue 29): refining a version again deletes the
-- version's rows and writes them anew, in one transaction. With a primary key, DuckDB takes
-- each deleted row out of the key's index at commit, fetching its key from compressed
-- storage one row at a time: on 296,100 examples the second `refine` of a version took
-- 12.1 s against 2.2 s for the first (4.3 s of it the delete's commit). Without the index
-- the delete takes milliseconds. Uniqueness of (version, example_id) and (version,
-- example_id, comment_id) holds by construction: a refine deletes every row of its version
-- first, then writes one row per loaded example (review_examples.example_id is a primary
-- key) and one per loaded comment (review_comments' key is (example_id, comment_id)).
-- Columns, their order, types, defaults and NOT NULLs are unchanged; the rows are copied.
create table refine_comments_0023 (
    version               varchar not null,
    example_id            varchar not null,
    comment_id            varchar not null,
    service_account       boolean not null,
    dropped               boolean not null,
    fence_strict          boolean not null,
    fence_gerrit          boolean not null,
    fence_loose           boolean not null,
    fix_applied           boolean not null,
    target_quoted         boolean not null,
    structured_suggestion boolean default false,
    host_message          boolean default false,
    robot_comment         boolean
);
insert into refine_comments_0023 select * from refine_comments;
drop table refine_comments;
alter table refine_comments_0023 rename to refine_comments;
create table refine_examples_0023 (
    version               varchar not null,
    example_id            varchar not null,
    org                   varchar not null,
    comments_built        integer not null,
    comments_kept         integer not null,
    service_comments      integer not null,
    rebase_successor      boolean not null,
    suggested_edit        boolean not null,
    fence_gerrit          boolean not null,
    fence_loose           boolean not null,
    applied_fix           boolean not null,
    target_in_comment     boolean not null,
    dedup_key             varchar,
    removed_reason        varchar,
    duplicate_of          varchar,
    resurrected           boolean not null,
    kept                  boolean not null,
    registration_file_id  integer,
    registered_windows    boolean not null,
    registered_halves     boolean not null,
    window_name           varchar,
    window_sealed         boolean not null,
    window_training       boolean not null,
    half                  varchar,
    structured_suggestion boolean default false,
    host_messages         integer default 0,
    fence_strict          boolean,
    has_target            boolean,
    robot_comments        integer
);
insert into refine_examples_0023 select * from refine_examples;
drop table refine_examples;
alter table refine_examples_0023 rename to refine_examples;
