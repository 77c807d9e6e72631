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
    loss_mask          tinyint[] not null,   -- 1 = supervised position; values as given (-128..127)
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

-- Trajectories: the messages behind the views, from any supported harness format,
-- normalized to one schema (SPEC §3.1).
create table sft_trajectories (
    instance_id varchar primary key,
    source      varchar not null,      -- format: mini-swe-agent, swe-agent, openhands, nebius, swe-smith, llamafactory
    family      varchar,               -- repository family
    tools       varchar,               -- OpenAI tool schemas the run offered, JSON text
    declared_resolved boolean,         -- the source's own resolved flag (null when it has none)
    n_messages  integer not null,
    file_id     integer not null,
    record      integer not null       -- 1-based row in the file (1 for one-trajectory files)
);

-- One row per message.
create table sft_messages (
    instance_id  varchar not null,
    msg_index    integer not null,
    role         varchar not null,     -- system, user, assistant, tool
    text         varchar not null,
    reasoning    varchar,              -- thinking text, when the source has it
    reasoning_chars       integer,     -- characters of the thinking text (null without one)
    reasoning_tokens      integer,     -- its length re-tokenized with the tokenizer given at load (null without)
    reasoning_zlib_ratio  double,      -- sph_zlib_ratio(reasoning): zlib bytes / raw bytes (null when empty)
    long_repetition       boolean,     -- >= 3,000 characters and zlib ratio < 0.1 (SPEC §3.4), stored verdict
    runs_test    boolean,              -- heuristic: an assistant message running a test command
    writes       boolean,              -- heuristic: an assistant message writing a file (shell or edit tool)
    test_result  varchar,              -- heuristic: 'pass' / 'fail' read from the observation of a test run
    tool_call_id varchar,              -- on tool messages
    tool_name    varchar,              -- on tool messages
    returncode   integer,              -- observation return code, when the source shows one
    mask         boolean,              -- the producer's own supervision flags, as given
    loss_weight  double,
    train        boolean,
    primary key (instance_id, msg_index)
);

-- Tool calls, structured or parsed from the message text (from_text).
create table sft_tool_calls (
    instance_id varchar not null,
    msg_index   integer not null,
    call_index  integer not null,
    call_id     varchar,
    name        varchar not null,
    arguments   varchar not null,      -- JSON text
    from_text   boolean not null
);

-- Shell commands an assistant message runs, with the git-history verdict stored
-- (SPEC §3.4: git log / show / blame / rev-list / reflog).
create table sft_commands (
    instance_id varchar not null,
    msg_index   integer not null,
    call_index  integer not null,
    command     varchar not null,
    git_history boolean not null,
    is_test     boolean not null,      -- heuristic: runs a test runner
    is_write    boolean not null       -- heuristic: writes a file
);

-- Evaluator outcomes per instance (SWE-bench report.json).
create table sft_outcomes (
    instance_id          varchar primary key,
    resolved             boolean not null,
    fail_to_pass_success integer not null,
    fail_to_pass_failure integer not null,
    pass_to_pass_success integer not null,
    pass_to_pass_failure integer not null,
    file_id              integer not null
);

-- Tool names of each harness mapped onto bash / read / edit / search / submit: data,
-- not code. A name missing here counts as 'other'.
create table tool_aliases (
    tool      varchar primary key,     -- the name as the harness calls it
    canonical varchar not null         -- bash, read, edit, search, submit
);
insert into tool_aliases values
    ('bash', 'bash'), ('execute_bash', 'bash'), ('python', 'bash'), ('rm', 'bash'), ('run', 'bash'),
    ('open', 'read'), ('goto', 'read'), ('scroll_up', 'read'), ('scroll_down', 'read'), ('view', 'read'),
    ('find_file', 'search'), ('search_file', 'search'), ('search_dir', 'search'), ('grep', 'search'),
    ('create', 'edit'), ('edit', 'edit'), ('insert', 'edit'), ('str_replace_editor', 'edit'),
    ('str_replace_based_edit_tool', 'edit'), ('append', 'edit'),
    ('submit', 'submit'), ('finish', 'submit');
