-- sft_truncation_over_v1: the view ids behind the counts of sft_truncation_v1 (views over
-- the length, views left all-masked, final reports lost, per pool) at the same lengths and
-- side: 8,192, 16,384, 32,768, 65,536 tokens, right truncation (SPEC §3.4). Drill-down of
-- the HTML report; the figures are sft_truncation_views_at_v1's, where they are defined.
-- Grain key: max_length, side, view_id.
-- Grain: one row per (max_length, view) for views with n_ids > max_length.
-- Columns: max_length; side; pool; view_id; instance_id; n_ids (tokens); all_masked_after;
--   final_report_lost. Ids and counts only, no tokens.
select max_length, side, pool, view_id, instance_id, n_ids, all_masked_after, final_report_lost
from sft_truncation_views_at_v1([8192, 16384, 32768, 65536], 'right')
