-- sft_truncation_v1: truncation survival per pool (sft_truncation_at_v1, where the figures
-- and columns are documented) at the common maximum lengths, right truncation.
-- Grain key: max_length, side, pool.
-- Grain: one row per (max_length in 8,192, 16,384, 32,768, 65,536; pool).
select * from sft_truncation_at_v1([8192, 16384, 32768, 65536], 'right')
