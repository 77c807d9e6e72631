-- 0020 packed rows (issue 27): a training row that holds several conversations (TRL
-- `pack_dataset` seq_lengths, position_ids restarting at 0, flash-attention cu_seqlens,
-- LLaMA-Factory neat_packing segment ids in attention_mask) is loaded as one view per packed
-- conversation (view_id '<row view_id>#<index>'), so contract, supervision, dedup and
-- exposure count each conversation as its own unit; these tables keep the row they came from.
--
-- One row per training row cut at its boundaries (two or more conversations, or padding
-- after them), or kept whole for what its spans or positions say: spans restarting at
-- message 0 with no boundary given (boundary_source null), position_ids that jump.
create table sft_view_packs (
    pack_id            varchar primary key,  -- the row's view_id (given, or '<pool>:<instance_id>:<record>')
    boundary_source    varchar,              -- seq_lengths | cu_seqlens | position_ids | attention_mask; null = none given
    n_units            integer not null,     -- conversations the boundaries name (1 without boundaries); cut when > 1 or n_padding > 0
    n_positions        integer not null,     -- len(input_ids) of the row
    n_padding          integer not null,     -- positions in no conversation (after the last, or attention_mask 0)
    padding_supervised integer not null,     -- of those, positions the loss mask supervises
    instances_declared integer not null,     -- instance ids the row names (1 for a string)
    span_restarts      integer not null,     -- message spans whose index restarts at 0 where no conversation starts
    spans_crossing     integer not null,     -- message spans that run past the end of their conversation
    spans_unplaced     integer not null,     -- message spans starting outside every conversation (kept in the one before)
    spans_continuing   integer not null,     -- conversations after the first whose first span is not message 0
    position_jumps     integer not null,     -- position_ids that neither restart at 0 nor follow by one
    claimed_tokens     bigint,               -- the row's ledger: what the producer says of the whole row
    claimed_supervised bigint,
    file_id            integer not null,
    record             integer not null
);

-- One row per view cut from a packed row: where it sits in the row.
create table sft_view_pack_units (
    view_id           varchar primary key,  -- '<pack_id>#<pack_index>'
    pack_id           varchar not null,
    pack_index        integer not null,     -- 0-based, in row order
    start_pos         integer not null,     -- [start_pos, end_pos) in the row's ids
    end_pos           integer not null,
    instance_declared boolean not null      -- the row named this conversation's instance (false: it repeats the first's)
);
