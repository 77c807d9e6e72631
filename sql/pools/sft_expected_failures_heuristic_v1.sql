-- sft_expected_failures_heuristic_v1: HEURISTIC review flag for report-only views (SPEC
-- §3.3, issue 5 item 4, the seed's pytest-ruff case): a report-only view whose trajectory
-- shows a failing test observation that is an expected failure (xfail, XFAIL,
-- "expected failure", a deliberately broken fixture) needs review before the report is
-- trusted. Grain: one row per report-only view of an instance with such an observation.
-- Grain key: view_id.
-- Columns: view_id; instance_id; msg_index (the observation); evidence (up to 300
--   characters around the first match); status ('needs review').
with report_views as (
    select v.view_id, v.instance_id from sft_views as v
    join sft_pool_roles as p on p.pool = v.pool and p.role = 'report'
),
hits as (
    select m.instance_id, m.msg_index, m.text,
           regexp_matches(m.text, '(?i)(xfail|expected failure|expectedfailure|intentionally (broken|invalid)|deliberately (broken|invalid))') as hit
    from sft_messages as m
    where m.role in ('user', 'tool') and m.test_result = 'fail'
),
first_hit as (
    select instance_id, min(msg_index) as msg_index from hits where hit group by instance_id
)
select
    r.view_id,
    r.instance_id,
    f.msg_index,
    substr(h.text, greatest(1, strpos(lower(h.text), 'xfail') - 150), 300) as evidence,
    'needs review' as status
from report_views as r
join first_hit as f using (instance_id)
join hits as h on h.instance_id = f.instance_id and h.msg_index = f.msg_index
