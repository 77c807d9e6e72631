-- the training budget of sft_budget_v1 for a gradient accumulation and step count given
-- on the command line (`report budget --grad-accum 8 --steps 500`).
-- Parameters: $1 gradient accumulation G; $2 step count S.
select
    cast($1 as integer) as grad_accum,
    cast($2 as integer) as steps,
    train_instances,
    views,
    exposure,
    context_tokens,
    cast(ceil(views / cast($1 as integer)) as bigint) as updates_per_epoch,
    cast($2 as integer) / nullif(ceil(views / cast($1 as integer)), 0) as passes
from (select distinct train_instances, views, exposure, context_tokens from sft_budget_v1)
