-- 0004 SFT views: tokenized training rows, their message spans and supervised runs
-- (SPEC §3.1-3.2). Loaders keep every view, however broken: contract failures are
-- reported by the contract views, never dropped at load.

-- One row per view (a training row): token ids and the loss mask as list columns.
create table sft_views (
    view_id            varchar primary key,  -- given, or '<pool>:<instance_id>:<record>'
    pool               varchar not null,
    instance_id        varchar not null,     -- the source instance (task trajectory)
    family             varchar,              -- repository family, e.g. 'django__django'
    n_ids              integer not null,     -- len(input_ids)
    n_mask             integer not null,     -- len(loss_mask)
    input_ids          integer[] not null,
    loss_mask          integer[] not null,   -- 1 = supervised position; values as given
    mask_source        varchar not null,     -- loss_mask | assistant_masks | labels | labels_shifted
    span_end           varchar,              -- the input's declared span convention: inclusive | exclusive
    keep_msgs          integer[],            -- messages kept for loss; null = every assistant message
    claimed_tokens     bigint,               -- ledger: what the producer says
    claimed_supervised bigint,
    vocab_size         integer,              -- from the tokenizer given at load; null = unknown
    tokenizer_sha256   varchar,
    declared_sha256    varchar,              -- SHA-256 the view declares for its source file
    declared_path      varchar,              -- that source file's path, as declared
    origin             varchar,              -- producer metadata, JSON text
    file_id            integer not null,
    record             integer not null
);

-- Message spans, normalized to [start_pos, end_pos) whatever the input declared.
create table sft_view_spans (
    view_id   varchar not null,
    ordinal   integer not null,    -- position in the input's list, 0-based
    msg_index integer not null,
    role      varchar not null,
    start_pos integer not null,
    end_pos   integer not null     -- exclusive
);

-- Maximal runs of supervised positions (loss_mask = 1): [run_start, run_end).
-- Derived at load from loss_mask, so position-level checks join ranges, not positions.
create table sft_view_runs (
    view_id   varchar not null,
    run_start integer not null,
    run_end   integer not null
);
