-- 0015 ingest anomalies (issue 15): what real producers write that strict JSON refuses or
-- an audit should see, accepted under the policy of src/ingest/anomaly.rs and recorded
-- here in the load transaction of the file (a refused load leaves no row).
-- Kinds: lone_surrogate (a \uD800-\uDFFF escape without its pair; stored text has U+FFFD,
-- detail keeps the escape), nan / infinity (NaN, Infinity, -Infinity outside a string;
-- read as null), nul (the escape \u0000; kept), control_char (another escaped control
-- character, e.g. \u001b of ANSI colours or \b; kept).

-- One row per (file, line, field, kind).
create table ingest_anomaly_records (
    file_id     integer not null,   -- ingest_log.file_id
    line        bigint,             -- 1-based line of the value; null when only the field locates it
    field       varchar not null,   -- field path in the loader's terms, e.g. [3].messages[5].content ('' = the record)
    kind        varchar not null,   -- lone_surrogate | nan | infinity | nul | control_char
    detail      varchar not null,   -- the first original spelling, e.g. \ud83d, NaN, \u001b
    occurrences bigint not null     -- how many of this kind the field holds
);
