-- sft_budget_v2: the training budget (sft_budget_at_v2, where the figures and columns are
-- documented: every attempt of a train instance counted) on the default grid.
-- Grain key: grad_accum, steps.
-- Grain: one row per (gradient accumulation G, fixed step count S) on the grid
-- G in 1, 4, 8, 16 and S in 100, 500, 1000.
select * from sft_budget_at_v2([1, 4, 8, 16], [100, 500, 1000])
