-- 0024 review tables without primary keys (issue 29): loading 296,100 examples, DuckDB
-- built and checked the keys' indexes of review_examples (example_id) and review_comments
-- (example_id, comment_id) for every appended row, and sealing updated rows under them.
-- Uniqueness holds by construction, before a row is written: the loader refuses an
-- example_id already loaded (naming the earlier file and record) or repeated within the
-- file (naming the first record), and the example writer refuses a comment_id repeated
-- within its example (src/review/load.rs, src/review/store.rs); every adapter names such
-- a repeat at its field first. The same reasoning as 0023's for the refine tables.
-- Columns, their order, types and NOT NULLs are unchanged (example_id stays NOT NULL, as
-- the key made it); the rows are copied.
create table review_examples_0024 (
    example_id     varchar not null,
    org            varchar not null,
    project        varchar,
    change         varchar,
    patch_set      integer,
    file_path      varchar,
    suffix         varchar not null,
    hunk           varchar,
    target         varchar,
    created_at     timestamp,
    revision_kind  varchar,
    predecessor_id varchar,
    file_id        integer not null,
    record         integer not null
);
insert into review_examples_0024 select * from review_examples;
drop table review_examples;
alter table review_examples_0024 rename to review_examples;
create table review_comments_0024 (
    comment_id      varchar not null,
    example_id      varchar not null,
    author_id       varchar,
    message         varchar not null,
    created_at      timestamp,
    in_reply_to     varchar,
    tag             varchar,
    service_account boolean,
    file_id         integer not null,
    record          integer not null,
    fix_suggestions integer,
    robot_id        varchar
);
insert into review_comments_0024 select * from review_comments;
drop table review_comments;
alter table review_comments_0024 rename to review_comments;
