-- sft_budget_v1: the training budget (sft_budget_at_v1, where the figures and columns are
-- documented) on the default grid.
-- Grain key: grad_accum, steps.
-- Grain: one row per (gradient accumulation G, fixed step count S) on the grid
-- G in 1, 4, 8, 16 and S in 100, 500, 1000.
select * from sft_budget_at_v1([1, 4, 8, 16], [100, 500, 1000])
