-- 0025 Inspect log headers: what an Inspect AI log says of its run as a whole (the archive's
-- header.json, the top level of a .json log). A log is written when a run ends however it
-- ends: `status` is 'success' only when every sample ran; 'cancelled' (interrupted) and
-- 'error' (the run raised) logs hold the samples that finished before, so the figures of
-- such a run are of part of its dataset (check run_log_unfinished).
create table eval_log_headers (
    run               varchar not null,  -- each run the log's samples go to (an epoch's run), and the load's run
    file_id           integer not null,
    status            varchar,           -- started / success / cancelled / error, as written (null: not stated)
    dataset_samples   bigint,            -- eval.dataset.samples: the dataset's size
    epochs            bigint,            -- eval.config.epochs
    total_samples     bigint,            -- results.total_samples: samples the run was to run (epochs included)
    completed_samples bigint,            -- results.completed_samples
    error_message     varchar,           -- error.message of a run that raised
    primary key (run, file_id)
);
