-- sft_instances_v1: one row per source instance, first cut (issue 4 item 5).
-- Grain: one row per instance that has a trajectory or a view.
-- Columns: instance_id; family; source (trajectory format, null without trajectory);
--   pools (sorted list of pools with a view of it); views; tokens (longest view, tokens);
--   supervised_tokens (summed over its views: exposure); assistant_messages (in the
--   trajectory); assistant_blocks_kept / assistant_blocks_masked (assistant spans of its
--   views that hold / do not hold a supervised token, summed over views); tool_calls_bash / _read /
--   _edit / _search / _submit / _other (tool calls by canonical tool, via tool_aliases);
--   resolved, fail_to_pass (success + failure nodes), pass_to_pass_passed (from the
--   evaluator report; null without one, and null when the report graded no test);
--   outcome ('resolved' | 'unresolved' | 'not graded': the report has no test results,
--   the patch was None or did not apply | null: no report).
with ids as (
    select instance_id from sft_trajectories
    union
    select instance_id from sft_views
),
views as (
    select instance_id,
           list_sort(list_distinct(list(pool))) as pools,
           count(*) as views,
           max(n_ids) as tokens,
           sum(len(list_filter(loss_mask, lambda x: x = 1)))::bigint as supervised_tokens,
           any_value(family) as family
    from sft_views
    group by instance_id
),
blocks as (
    -- an assistant span is kept when it holds a supervised token, masked otherwise
    select v.instance_id,
           count(*) filter (where supervised) as kept,
           count(*) filter (where not supervised) as masked
    from (
        select s.view_id, exists (select 1 from sft_view_runs as r
                                  where r.view_id = s.view_id and r.run_start < s.end_pos and r.run_end > s.start_pos) as supervised
        from sft_view_spans as s
        where s.role = 'assistant'
    ) as s
    join sft_views as v using (view_id)
    group by v.instance_id
),
assistant as (
    select instance_id, count(*) as assistant_messages
    from sft_messages
    where role = 'assistant'
    group by instance_id
),
tools as (
    select c.instance_id,
           count(*) filter (where a.canonical = 'bash') as bash,
           count(*) filter (where a.canonical = 'read') as read,
           count(*) filter (where a.canonical = 'edit') as edit,
           count(*) filter (where a.canonical = 'search') as search,
           count(*) filter (where a.canonical = 'submit') as submit,
           count(*) filter (where a.canonical is null) as other
    from sft_tool_calls as c
    left join tool_aliases as a on a.tool = c.name
    group by c.instance_id
)
select
    i.instance_id,
    coalesce(t.family, v.family) as family,
    t.source,
    v.pools,
    coalesce(v.views, 0) as views,
    v.tokens,
    v.supervised_tokens,
    a.assistant_messages,
    b.kept as assistant_blocks_kept,
    b.masked as assistant_blocks_masked,
    coalesce(tl.bash, 0) as tool_calls_bash,
    coalesce(tl.read, 0) as tool_calls_read,
    coalesce(tl.edit, 0) as tool_calls_edit,
    coalesce(tl.search, 0) as tool_calls_search,
    coalesce(tl.submit, 0) as tool_calls_submit,
    coalesce(tl.other, 0) as tool_calls_other,
    o.resolved,
    o.fail_to_pass_success + o.fail_to_pass_failure as fail_to_pass,
    o.pass_to_pass_success as pass_to_pass_passed,
    case
        when o.instance_id is null then null
        when o.fail_to_pass_success is null then 'not graded'
        when o.resolved then 'resolved'
        else 'unresolved'
    end as outcome
from ids as i
left join sft_trajectories as t using (instance_id)
left join views as v using (instance_id)
left join blocks as b using (instance_id)
left join assistant as a using (instance_id)
left join tools as tl using (instance_id)
left join sft_outcomes as o using (instance_id)
