-- show view, step 3: the contract checks one view fails (sft_contract_failures_v1), each
-- with the token position the viewer highlights. Parameter: $1 view_id.
-- Columns: check_name; position (as the contract view gives it: a token position, or a
--   span ordinal for the spans check); token_position (the first offending token: the
--   position, or for spans the start of that span clamped into the sequence; null when
--   the check names no position, e.g. ledger); detail.
select f.check_name, f.position,
       case when f.check_name = 'spans' then
                (select least(greatest(s.start_pos, 0), greatest(v.n_ids, v.n_mask) - 1)
                 from sft_view_spans as s where s.view_id = f.view_id and s.ordinal = f.position)
            else f.position end as token_position,
       f.detail
from sft_contract_failures_v1 as f
join sft_views as v using (view_id)
where f.view_id = $1
order by f.position nulls last, f.check_name
