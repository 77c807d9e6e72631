-- sft_truncation_views_v1: the per-view truncation detail (sft_truncation_views_at_v1,
-- where the figures and columns are documented) at 32,768 tokens, right truncation.
-- Grain key: max_length, side, view_id.
-- Grain: one row per view longer than 32,768 tokens.
select * from sft_truncation_views_at_v1([32768], 'right')
