-- 0014 view segments (issue 9, segment-level mask audit): every message span of a view
-- cut into the parts its chat template rendered — header, thinking and other paired
-- blocks, visible text, end of turn, content — read from the tokenizer's added tokens
-- by src/sft/segments.rs in the load transaction of `load views --tokenizer T`.
-- Views loaded without a tokenizer have no rows here; their file is absent from
-- sft_segment_files, and the segment views say so ('unknown'), never zero.

-- One row per segment range [start_pos, end_pos) of a view. Ranges of one span tile it;
-- positions outside every span are segment 'outside' (ordinal, msg_index, role null).
create table sft_view_segments (
    view_id   varchar not null,
    ordinal   integer,             -- the span's ordinal in sft_view_spans; null outside spans
    msg_index integer,             -- the span's message index; null outside spans
    role      varchar,             -- the span's role; null outside spans
    segment   varchar not null,    -- header | thinking | text | tool_call | <block> | end_of_turn | content | outside
    start_pos integer not null,
    end_pos   integer not null     -- exclusive
);

-- One row per loaded view file whose segments were derived: with which tokenizer and
-- rules. A view whose file_id is not here has unknown segments.
create table sft_segment_files (
    file_id          integer primary key,
    tokenizer_sha256 varchar not null,
    rules            varchar not null,  -- JSON: derivation version, delimiters and blocks found in the tokenizer, tokens that opened headers and closed turns
    views            integer not null,
    segments         bigint not null
);
