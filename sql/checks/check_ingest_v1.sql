-- check_ingest_v1: what the loaders accepted but an audit should see, as checks (issue 26;
-- ingest anomaly policy, src/ingest/anomaly.rs), read from ingest_anomalies_v1.
-- Grain key: check_name, scope.
-- Grain: one row per kind of input loaded; with no input loaded, one row, not run.
-- Checks:
--   ingest_anomalies (warn; failing > 0): records holding a value strict JSON refuses or an
--     audit should see (lone surrogate, NaN, infinity, NUL, control character), of the
--     records loaded from inputs of that kind (a record located by field only counts once
--     per file); detail: the kinds of anomaly found with their counts.
-- Columns: the check columns (check_findings_at_v1).
with loaded as (
    select kind, sum(rows)::bigint as records from ingest_log group by kind
),
anomalous as (
    select kind_of_input as kind,
           count(distinct (file_id, coalesce(line, -1)))::bigint as records,
           string_agg(distinct kind, ', ' order by kind) as kinds
    from ingest_anomalies_v1
    group by kind_of_input
),
checks as (
    select 'ingest_anomalies' as check_name, 'warn' as severity, 'input=' || l.kind as scope,
           l.records as tested, coalesce(a.records, 0) as failing, null::varchar as error_if, 'failing > 0' as warn_if,
           case when l.records = 0 then 'the inputs of this kind hold no record' end as reason,
           a.kinds as detail,
           format('select * from ingest_anomalies_v1 where kind_of_input = ''{}''', replace(l.kind, '''', '''''')) as drill_down
    from loaded as l
    left join anomalous as a using (kind)
    union all
    select 'ingest_anomalies', 'warn', 'corpus', null, null, null, 'failing > 0', 'no input loaded (load KIND FILE)', null, null
    where not exists (select 1 from ingest_log)
)
select check_name, 'ingest' as area, severity, scope, tested, failing, error_if, warn_if, reason, detail, drill_down
from checks
