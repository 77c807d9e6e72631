-- ingest_anomalies_v1: values of loaded files that strict JSON refuses or an audit should
-- see, accepted under the ingest anomaly policy (issue 15; src/ingest/anomaly.rs).
-- Grain key: file_id, line, field, kind.
-- Grain: one row per file, line, field and kind of anomaly.
-- Columns: file_id; kind_of_input (ingest_log.kind); path (absolute at load time);
--   line (1-based; null when only the field locates it); field (path in the loader's
--   terms, e.g. [3].messages[5].content); kind (lone_surrogate | nan | infinity | nul |
--   control_char); detail (the first original spelling, e.g. \ud83d); occurrences
--   (count in the field).
with anomalies as (
    select file_id, line, field, kind, detail, occurrences from ingest_anomaly_records
),
files as (
    select file_id, kind as kind_of_input, path from ingest_log
),
final as (
    select a.file_id, f.kind_of_input, f.path, a.line, a.field, a.kind, a.detail, a.occurrences
    from anomalies as a
    join files as f using (file_id)
)
select * from final
order by file_id, line nulls last, field, kind
