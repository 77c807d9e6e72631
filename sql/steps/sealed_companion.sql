-- sealed companion schema: the content of examples in a sealed test window (SPEC §1.6),
-- kept in <db>.sealed.duckdb, attached as sph_sealed only by sphragis (to seal, to refine,
-- and under `examples --unseal`). Grain: one row per example / per (example, comment).
-- Columns are those of review_examples / review_comments they replace.
create table if not exists sph_sealed.sealed_examples (
    example_id varchar primary key,
    hunk       varchar,            -- the commented lines as they were
    target     varchar             -- the revised lines in the next patch set
);
create table if not exists sph_sealed.sealed_comments (
    example_id varchar not null,
    comment_id varchar not null,
    message    varchar not null,   -- the comment text
    primary key (example_id, comment_id)
);
