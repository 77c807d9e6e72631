-- sft_weight_projection_v1: the weight projection (sft_weight_projection_at_v1, where the
-- formula and its columns are documented) on the default grid of recovery weights.
-- Grain key: weight.
-- Grain: one row per w in 0, 0.25, 0.5, 1, 2, 4 (`report weights --weights` for others).
select * from sft_weight_projection_at_v1([0.0, 0.25, 0.5, 1.0, 2.0, 4.0])
