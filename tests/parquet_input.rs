//! Parquet inputs (issues 29 and 27): `load views` and `load trajectories` of Parquet
//! files, folders and globs of shards.
//!
//! The Parquet files are written at test time by DuckDB itself from the JSON-lines
//! samples (`COPY (select … from read_json(…)) TO 'x.parquet'`); a database loaded from
//! the JSON lines and one loaded from the Parquet copies must give every SFT figure and
//! check row for row. The small cases are worked out by hand.

use sphragis::ingest::LoadOutcome;
use std::path::{Path, PathBuf};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data-samples/sft")
}

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sphragis-parquet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `sql` (DuckDB, in memory): how the test inputs are written.
fn duck(sql: &str) {
    let conn = duckdb::Connection::open_in_memory().unwrap();
    conn.execute_batch(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn lit(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "''"))
}

/// The JSON-lines file `jsonl` written as Parquet at `out` by DuckDB's own reader and
/// writer (lists as lists, span objects as structs). `origin`, an object whose keys vary
/// by line, is kept as the JSON text it was (a struct would add null keys).
fn to_parquet(jsonl: &Path, out: &Path) {
    let has_origin = std::fs::read_to_string(jsonl).unwrap().contains("\"origin\"");
    // DuckDB infers a list holding -100 as HUGEINT[], which Parquet stores as DOUBLE:
    // written as BIGINT[], as Hugging Face writes labels
    let conn = duckdb::Connection::open_in_memory().unwrap();
    let mut stmt = conn
        .prepare(&format!("describe select * from read_json({}, format = 'newline_delimited')", lit(jsonl)))
        .unwrap();
    let mut replace: Vec<String> = stmt
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .filter(|(_, t)| t == "HUGEINT[]")
        .map(|(c, _)| format!("r.\"{c}\"::bigint[] as \"{c}\""))
        .collect();
    if has_origin {
        replace.push("o.origin as origin".into());
    }
    let replace = if replace.is_empty() { String::new() } else { format!("replace ({})", replace.join(", ")) };
    let sql = format!(
        "copy (select r.* exclude (n) {replace} from \
           (select row_number() over () as n, * from read_json({0}, format = 'newline_delimited')) as r \
           join (select row_number() over () as n, json -> '$.origin' as origin from read_ndjson_objects({0})) as o \
           using (n) order by n) to {1} (format parquet)",
        lit(jsonl),
        lit(out)
    );
    duck(&sql);
}

fn db() -> sphragis::db::Database {
    sphragis::db::open(Path::new(":memory:")).unwrap()
}

/// Every row of `sql` as tab-separated text, sorted (row order is not a figure).
fn rows(conn: &duckdb::Connection, sql: &str) -> Vec<String> {
    let table = sphragis::report::query(conn, sql, &[]).unwrap_or_else(|e| panic!("{sql}: {e:#}"));
    let mut out: Vec<String> =
        table.rows.iter().map(|r| r.iter().map(sphragis::report::text).collect::<Vec<_>>().join("\t")).collect();
    out.sort();
    out
}

/// The columns of `relation` but those that name where a row was read from (the file's
/// id and path differ between the two loads by design).
fn columns_but_file(conn: &duckdb::Connection, relation: &str) -> String {
    let mut stmt = conn.prepare(&format!("describe select * from {relation}")).unwrap();
    let names: Vec<String> = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(|r| r.unwrap()).collect();
    names.iter().filter(|n| !matches!(n.as_str(), "file_id")).map(|n| format!("\"{n}\"")).collect::<Vec<_>>().join(", ")
}

/// The SFT views and checks (every `sft_*` and `check_sft_*` view the database defines).
fn sft_views(conn: &duckdb::Connection) -> Vec<String> {
    let mut stmt = conn
        .prepare(
            "select view_name from duckdb_views() where not internal \
             and (view_name like 'sft\\_%' escape '\\' or view_name like 'check\\_sft\\_%' escape '\\') \
             order by view_name",
        )
        .unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0)).unwrap().map(|r| r.unwrap()).collect()
}

/// Asserts that every SFT view, check and table gives the same rows in `a` and `b`;
/// returns how many views were compared with at least one row.
fn assert_same_figures(a: &duckdb::Connection, b: &duckdb::Connection, tables: &[&str]) -> usize {
    let views = sft_views(a);
    assert!(views.len() > 30, "{views:?}");
    let mut nonempty = 0;
    for relation in views.iter().map(String::as_str).chain(tables.iter().copied()) {
        let sql = format!("select {} from {relation}", columns_but_file(a, relation));
        let (x, y) = (rows(a, &sql), rows(b, &sql));
        assert_eq!(x, y, "{relation} differs between the JSON-lines and the Parquet load");
        nonempty += usize::from(!x.is_empty());
    }
    nonempty
}

fn load_views(conn: &duckdb::Connection, path: &Path) -> anyhow::Result<Vec<LoadOutcome>> {
    sphragis::sft::views::load_all(conn, path, &Default::default(), &mut |_| {})
}

fn sha256_of(path: &Path) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

fn loaded(outcome: &LoadOutcome) -> &sphragis::ingest::LoadedFile {
    match outcome {
        LoadOutcome::Loaded(f) => f,
        other => panic!("not loaded: {other:?}"),
    }
}

#[test]
fn views_from_parquet_give_the_figures_of_their_json_lines() {
    let dir = scratch("views-equal");
    let files = [
        ("views.jsonl", samples().join("views.jsonl")),
        ("packed.jsonl", samples().join("packed/views.jsonl")),
        ("segments.jsonl", samples().join("segment_views.jsonl")),
    ];
    let (json_db, parquet_db) = (db(), db());
    for (name, jsonl) in &files {
        let parquet = dir.join(name.replace(".jsonl", ".parquet"));
        to_parquet(jsonl, &parquet);
        let a = sphragis::sft::views::load(&json_db, jsonl, &Default::default(), &mut |_| {}).unwrap();
        let b = load_views(&parquet_db, &parquet).unwrap();
        assert_eq!(b.len(), 1);
        // the same rows; the ingest log holds the Parquet file's own bytes
        assert_eq!(loaded(&a).rows, loaded(&b[0]).rows, "{name}");
        assert_eq!(loaded(&b[0]).sha256, sha256_of(&parquet));
        assert_eq!(loaded(&b[0]).bytes as u64, std::fs::metadata(&parquet).unwrap().len());
    }
    let compared = assert_same_figures(
        &json_db,
        &parquet_db,
        &["sft_views", "sft_view_spans", "sft_view_runs", "sft_view_packs", "sft_view_pack_units"],
    );
    assert!(compared >= 10, "only {compared} views had rows");
    // the samples' faults are there to be compared: 14 + 6 cut into views + 6
    assert_eq!(rows(&parquet_db, "select count(*) from ingest_log where kind = 'views'"), ["3"]);
    assert_ne!(rows(&parquet_db, "select count(*) from check_sft_contract_v1 where failing > 0"), ["0"]);
}

#[test]
fn audit_sample_from_parquet_gives_the_same_pools_figures() {
    let d = samples().join("audit");
    let dir = scratch("audit-equal");
    let parquet = dir.join("views.parquet");
    to_parquet(&d.join("views.jsonl"), &parquet);
    let traj = dir.join("thinking.parquet");
    to_parquet(&d.join("thinking.jsonl"), &traj);
    let load = |views: &Path, thinking: &Path| {
        let conn = db();
        for t in ["demo__env-1.traj.json", "demo__fix-2.traj.json", "broken__lint-3.traj.json"] {
            sphragis::sft::store::load_trajectories(&conn, &d.join(t), None).unwrap();
        }
        sphragis::sft::store::load_trajectories(&conn, thinking, None).unwrap();
        sphragis::sft::views::load(&conn, views, &Default::default(), &mut |_| {}).unwrap();
        sphragis::sft::pools::load(&conn, &d.join("pools.json")).unwrap();
        sphragis::sft::pools::load_manifest(&conn, &d.join("manifest.json")).unwrap();
        sphragis::sft::pools::load_samples(&conn, &d.join("samples.sqlite")).unwrap();
        for id in ["demo__env-1", "demo__fix-2", "broken__lint-3"] {
            sphragis::sft::store::load_outcome(&conn, &d.join("logs").join(id).join("report.json")).unwrap();
        }
        conn
    };
    let (json_db, parquet_db) = (load(&d.join("views.jsonl"), &d.join("thinking.jsonl")), load(&parquet, &traj));
    let compared = assert_same_figures(
        &json_db,
        &parquet_db,
        &["sft_views", "sft_view_runs", "sft_trajectories", "sft_messages", "sft_tool_calls", "sft_commands"],
    );
    assert!(compared >= 20, "only {compared} views had rows");
    // by hand (tests/sft_audit_samples.rs): no dedup, 5 training views, exposure 13
    assert_eq!(
        rows(&parquet_db, "select views, instances, exposure from sft_dedup_v1 where mode = 'none'"),
        ["5\t2\t13"]
    );
}

#[test]
fn trajectories_from_parquet_read_as_their_json_lines() {
    let dir = scratch("trajectories-equal");
    let (json_db, parquet_db) = (db(), db());
    for name in ["sharegpt_agent.jsonl", "swift_agent.jsonl"] {
        let jsonl = samples().join("shapes").join(name);
        let parquet = dir.join(name.replace(".jsonl", ".parquet"));
        to_parquet(&jsonl, &parquet);
        let a = sphragis::sft::store::load_trajectories(&json_db, &jsonl, None).unwrap();
        let b = sphragis::sft::store::load_trajectories(&parquet_db, &parquet, None).unwrap();
        assert_eq!(loaded(&a).rows, loaded(&b).rows);
        assert_eq!(loaded(&b).sha256, sha256_of(&parquet));
    }
    for table in ["sft_trajectories", "sft_messages", "sft_tool_calls", "sft_commands"] {
        let sql = format!("select {} from {table}", columns_but_file(&json_db, table));
        let rows_json = rows(&json_db, &sql);
        assert!(!rows_json.is_empty() || table == "sft_commands", "{table}");
        assert_eq!(rows_json, rows(&parquet_db, &sql), "{table}");
    }
}

#[test]
fn three_rows_in_three_mask_conventions() {
    let dir = scratch("three");
    let p = dir.join("three.parquet");
    // as Hugging Face writes them: input_ids int32, attention_mask int8, labels int64
    duck(&format!(
        "copy (select * from (values
            ('r1', 'P', 'demo__a-1', [5, 6, 7, 8]::integer[], [0, 0, 1, 1]::tinyint[], null::bigint[], null::tinyint[], [1, 1, 1, 1]::tinyint[]),
            ('r2', 'P', 'demo__a-2', [5, 6, 9]::integer[], null, [-100, 6, 9]::bigint[], null, [1, 1, 1]::tinyint[]),
            ('r3', 'P', 'demo__b-1', [1, 2]::integer[], null, null, [1, 0]::tinyint[], null)
         ) as t(view_id, pool, instance_id, input_ids, loss_mask, labels, assistant_masks, attention_mask)) to {}",
        lit(&p)
    ));
    let conn = db();
    let out = load_views(&conn, &p).unwrap();
    assert_eq!(loaded(&out[0]).rows, 3);
    assert_eq!(
        rows(&conn, "select view_id, instance_id, input_ids, loss_mask, mask_source, record, n_ids from sft_views"),
        [
            "r1\tdemo__a-1\t[5, 6, 7, 8]\t[0, 0, 1, 1]\tloss_mask\t1\t4",
            "r2\tdemo__a-2\t[5, 6, 9]\t[0, 1, 1]\tlabels\t2\t3",
            "r3\tdemo__b-1\t[1, 2]\t[1, 0]\tassistant_masks\t3\t2",
        ]
    );
    assert_eq!(
        rows(&conn, "select view_id, run_start, run_end from sft_view_runs"),
        ["r1\t2\t4", "r2\t1\t3", "r3\t0\t1"]
    );
    assert_eq!(rows(&conn, "select sha256, rows from ingest_log"), [format!("{}\t3", sha256_of(&p))]);
}

/// Writes one Parquet file from a `select` and returns the error of loading it as views.
fn refusal(dir: &Path, name: &str, select: &str) -> (PathBuf, String) {
    let p = dir.join(name);
    duck(&format!("copy ({select}) to {}", lit(&p)));
    let conn = db();
    let err = format!("{:#}", load_views(&conn, &p).unwrap_err());
    // a refused file writes nothing
    assert_eq!(rows(&conn, "select count(*) from sft_views"), ["0"]);
    assert_eq!(rows(&conn, "select count(*) from ingest_log"), ["0"]);
    (p, err)
}

#[test]
fn refusals_name_file_row_and_column() {
    let dir = scratch("refusals");
    let good = "select 'P' as pool, 'demo__a-1' as instance_id, [1, 2]::integer[] as input_ids, [0, 1]::integer[] as loss_mask";
    let (p, e) = refusal(&dir, "no_ids.parquet", "select 'P' as pool, 'demo__a-1' as instance_id, [0, 1] as loss_mask");
    assert_eq!(
        e,
        format!(
            "{}:row 1: column `input_ids`: missing: the file has no such column (its columns: pool, instance_id, loss_mask)",
            p.display()
        )
    );
    let (p, e) = refusal(
        &dir,
        "text_ids.parquet",
        &format!("{good} union all select 'P', 'demo__a-2', ['1', '2'], [0, 1] order by instance_id"),
    );
    assert_eq!(e, format!("{}:row 1: column `input_ids`: is VARCHAR[], not a list of integers", p.display()));
    // two conventions of different lengths disagree (row 2)
    let (p, e) = refusal(
        &dir,
        "lengths.parquet",
        "select * from (values ('P', 'demo__a-1', [1, 2, 3], [0, 1, 1], [-100, 2, 3]), \
         ('P', 'demo__a-2', [1, 2, 3], [0, 1, 1], [-100, 2])) as t(pool, instance_id, input_ids, loss_mask, labels)",
    );
    assert_eq!(
        e,
        format!("{}:row 2: column `labels`: has 2 values, loss_mask has 3: the conventions disagree", p.display())
    );
    let (p, e) = refusal(
        &dir,
        "wide.parquet",
        "select 'P' as pool, 'demo__a-1' as instance_id, [1, 5000000000]::bigint[] as input_ids, [0, 1] as loss_mask",
    );
    assert_eq!(e, format!("{}:row 1: column `input_ids[1]`: 5000000000 does not fit a 32-bit integer", p.display()));
    let (p, e) = refusal(
        &dir,
        "null_value.parquet",
        "select 'P' as pool, 'demo__a-1' as instance_id, [1, 2] as input_ids, [0, null]::integer[] as loss_mask",
    );
    assert_eq!(e, format!("{}:row 1: column `loss_mask[1]`: null; expected an integer", p.display()));
    let (p, e) =
        refusal(&dir, "no_pool.parquet", "select 'demo__a-1' as instance_id, [1, 2] as input_ids, [0, 1] as loss_mask");
    assert_eq!(e, format!("{}:row 1: column `pool`: missing: give it on the line or with --pool", p.display()));
    let (p, e) = refusal(
        &dir,
        "pool_number.parquet",
        "select 7 as pool, 'demo__a-1' as instance_id, [1, 2] as input_ids, [0, 1] as loss_mask",
    );
    assert!(e.starts_with(&format!("{}:row 1: column `pool`: invalid type: integer `7`", p.display())), "{e}");
    // not Parquet at all, under a .parquet name
    let p = dir.join("lines.parquet");
    std::fs::write(&p, "{\"input_ids\": [1]}\n").unwrap();
    let e = format!("{:#}", load_views(&db(), &p).unwrap_err());
    assert_eq!(
        e,
        format!(
            "{}: not a Parquet file: it does not start with PAR1 (it looks like JSON: name it .jsonl or .json)",
            p.display()
        )
    );
}

#[test]
fn a_lone_short_mask_loads_and_the_contract_reports_it_as_for_json_lines() {
    let dir = scratch("short-mask");
    let jsonl = dir.join("short.jsonl");
    std::fs::write(
        &jsonl,
        "{\"pool\": \"P\", \"instance_id\": \"demo__a-1\", \"input_ids\": [1, 2, 3], \"loss_mask\": [0, 1]}\n",
    )
    .unwrap();
    let p = dir.join("short.parquet");
    to_parquet(&jsonl, &p);
    let (a, b) = (db(), db());
    sphragis::sft::views::load(&a, &jsonl, &Default::default(), &mut |_| {}).unwrap();
    load_views(&b, &p).unwrap();
    let sql = "select check_name, scope, tested, failing from check_sft_contract_v1 where failing > 0";
    assert_eq!(rows(&a, sql), rows(&b, sql));
    assert!(rows(&b, sql).contains(&"contract_lengths\tpool=P\t1\t1".to_string()), "{:?}", rows(&b, sql));
}

#[test]
fn shards_of_a_split_load_in_name_order_in_one_transaction() {
    let dir = scratch("shards");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    // written in reverse order: the load orders them by name
    for (k, ids) in [(1, "'demo__b-1', 'demo__b-2'"), (0, "'demo__a-1'")] {
        duck(&format!(
            "copy (select 'P' as pool, unnest([{ids}]) as instance_id, [1, 2, 3] as input_ids, [0, 1, 1] as loss_mask) \
             to {}",
            lit(&data.join(format!("train-0000{k}-of-00002.parquet")))
        ));
    }
    let conn = db();
    let out = load_views(&conn, &data).unwrap();
    let names: Vec<(String, i64)> = out
        .iter()
        .map(|o| {
            let f = loaded(o);
            (Path::new(&f.path).file_name().unwrap().to_string_lossy().into_owned(), f.rows)
        })
        .collect();
    assert_eq!(
        names,
        [("train-00000-of-00002.parquet".to_string(), 1), ("train-00001-of-00002.parquet".to_string(), 2)]
    );
    for o in &out {
        assert_eq!(loaded(o).sha256, sha256_of(Path::new(&loaded(o).path)));
    }
    // each view records the row of its own shard
    assert_eq!(
        rows(&conn, "select v.instance_id, v.record, v.view_id from sft_views as v order by 1"),
        ["demo__a-1\t1\tP:demo__a-1:1", "demo__b-1\t1\tP:demo__b-1:1", "demo__b-2\t2\tP:demo__b-2:2"]
    );
    // a glob names the same shards; loaded again, the same bytes are skipped
    let again = load_views(&conn, &data.join("train-*.parquet")).unwrap();
    assert!(again.iter().all(|o| matches!(o, LoadOutcome::AlreadyLoaded { .. })), "{again:?}");
    // a bad second shard: nothing of the first is written either
    let bad = dir.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::copy(data.join("train-00000-of-00002.parquet"), bad.join("train-00000-of-00002.parquet")).unwrap();
    duck(&format!(
        "copy (select 'P' as pool, 'demo__c-1' as instance_id, [1, 2] as input_ids, [7, 1, 1]::integer[] as loss_mask, \
         [-100, 2]::integer[] as labels) to {}",
        lit(&bad.join("train-00001-of-00002.parquet"))
    ));
    let fresh = db();
    let e = format!("{:#}", load_views(&fresh, &bad).unwrap_err());
    assert!(e.contains("train-00001-of-00002.parquet:row 1: column `labels`"), "{e}");
    assert_eq!(rows(&fresh, "select count(*) from sft_views"), ["0"]);
    assert_eq!(rows(&fresh, "select count(*) from ingest_log"), ["0"]);
    // a folder without Parquet
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = format!("{:#}", load_views(&fresh, &empty).unwrap_err());
    assert_eq!(e, format!("{}: no Parquet file (*.parquet) there", empty.display()));
}

#[test]
fn swe_smith_rows_with_messages_as_a_json_string_column() {
    let dir = scratch("swe-smith");
    let p = dir.join("smith.parquet");
    let messages = r#"[{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Fix the bug."}, {"role": "assistant", "content": "Let me look.\n<function=bash>\n<parameter=command>git log -3</parameter>\n</function>"}, {"role": "user", "content": "OBSERVATION:\nabc"}]"#;
    duck(&format!(
        "copy (select 'pkg__repo.abc123.lm_rewrite__x1' as instance_id, 'tr-1' as traj_id, true as resolved, '{}' as messages) to {}",
        messages.replace('\'', "''"),
        lit(&p)
    ));
    let conn = db();
    let out = sphragis::sft::store::load_trajectories_all(&conn, &p, None).unwrap();
    assert_eq!(loaded(&out[0]).rows, 1);
    assert_eq!(rows(&conn, "select source, declared_resolved from sft_trajectories"), ["swe-smith\ttrue"]);
    assert_eq!(rows(&conn, "select count(*) from sft_messages"), ["4"]);
    assert_eq!(rows(&conn, "select command, git_history from sft_commands"), ["git log -3\ttrue"]);
}

#[test]
fn chat_messages_as_hugging_face_writes_them_with_a_row_named_error() {
    let dir = scratch("hf-messages");
    // LLaMA-Factory typed parts as a list of structs; the second row's role is a number
    let p = dir.join("rows.parquet");
    duck(&format!(
        "copy (select * from (values
            ([{{'role': 'user', 'content': [{{'type': 'text', 'value': 'List the files.'}}]}},
              {{'role': 'assistant', 'content': [{{'type': 'text', 'value': 'Done.'}}]}}]),
            ([{{'role': 'user', 'content': [{{'type': 'text', 'value': 'Again.'}}]}},
              {{'role': 'assistant', 'content': [{{'type': 'text', 'value': 'Done again.'}}]}}])
         ) as t(messages)) to {}",
        lit(&p)
    ));
    let conn = db();
    let out = sphragis::sft::store::load_trajectories_all(&conn, &p, None).unwrap();
    assert_eq!(loaded(&out[0]).rows, 2);
    assert_eq!(
        rows(&conn, "select m.role, m.text from sft_messages as m order by all"),
        ["assistant\tDone again.", "assistant\tDone.", "user\tAgain.", "user\tList the files."]
    );
    let bad = dir.join("bad.parquet");
    duck(&format!(
        "copy (select * from (values
            ([{{'role': 'user', 'content': [{{'type': 'text', 'value': 'One.'}}]}}]),
            ([{{'role': 'user', 'content': [{{'type': 'nonsense', 'value': 'Two.'}}]}}])
         ) as t(messages)) to {}",
        lit(&bad)
    ));
    let e = format!("{:#}", sphragis::sft::store::load_trajectories_all(&db(), &bad, None).unwrap_err());
    assert!(e.starts_with(&format!("{}:row 2: column `messages[0]", bad.display())), "{e}");
}

/// Hostile input D7: a string column written as BYTE_ARRAY without the UTF8 annotation
/// (DuckDB: BLOB; older Spark, Hive and Arrow writers) was stored as `to_json`'s `\xNN`
/// escape text (`caf\xC3\xA9__x-1`), so the id and family no longer matched. A BLOB column
/// is decoded as UTF-8; one that is not UTF-8 is refused at its row and column, and a
/// nested type holding BLOB at its column.
#[test]
fn blob_string_columns_are_decoded_not_escaped() {
    let dir = scratch("blob");
    let p = dir.join("blob_utf8.parquet");
    duck(&format!(
        "copy (select 'p1' as view_id, encode('A') as pool, encode('café__x-1') as instance_id, \
         [1, 2]::integer[] as input_ids, [0, 1]::integer[] as loss_mask) to {}",
        lit(&p)
    ));
    let conn = db();
    load_views(&conn, &p).unwrap();
    assert_eq!(
        rows(&conn, "select pool || ' ' || instance_id || ' ' || family from sft_views"),
        ["A café__x-1 café__x"]
    );
    let (p, e) = refusal(
        &dir,
        "blob_bad.parquet",
        "select * from (values ('A', encode('x__y-1')), ('A', '\\xFF\\xFE'::blob)) as t(pool, instance_id), \
         (select [1, 2]::integer[] as input_ids, [0, 1]::integer[] as loss_mask)",
    );
    assert_eq!(
        e,
        format!(
            "{}:row 2: column `instance_id`: is BLOB (bytes, not a string) and its value is not UTF-8",
            p.display()
        )
    );
    let (p, e) = refusal(
        &dir,
        "blob_nested.parquet",
        "select 'A' as pool, 'x__y-1' as instance_id, [1, 2]::integer[] as input_ids, [0, 1]::integer[] as loss_mask, \
         'exclusive' as span_end, [{'index': 0, 'role': encode('user'), 'start': 0, 'end': 2}] as message_spans",
    );
    assert_eq!(
        e,
        format!(
            "{}: column `message_spans`: is STRUCT(\"index\" INTEGER, \"role\" BLOB, \"start\" INTEGER, \"end\" INTEGER)[]: \
             it holds BLOB values (bytes), not strings",
            p.display()
        )
    );
    // trajectories read every column through the same decoding
    let t = dir.join("traj.parquet");
    duck(&format!(
        "copy (select encode('café__x-1') as instance_id, [{{'role': 'user', 'content': 'hi'}}, \
         {{'role': 'assistant', 'content': 'ok'}}] as messages) to {}",
        lit(&t)
    ));
    let conn = db();
    let _ = sphragis::sft::store::load_trajectories(&conn, &t, None);
    let ids = rows(&conn, "select instance_id from sft_trajectories");
    assert!(ids.is_empty() || ids == ["café__x-1"], "{ids:?}");
}

/// Hostile input D13: a `UBIGINT[]` value above 2^63 became null in the cast to 64 bits
/// and was reported as "null; expected an integer". It is named with its value.
#[test]
fn ubigint_above_i64_is_out_of_range_not_null() {
    let dir = scratch("ubigint");
    let (p, e) = refusal(
        &dir,
        "ubig.parquet",
        "select 'A' as pool, 'x__y-1' as instance_id, [1, 18446744073709551615]::ubigint[] as input_ids, [0, 1]::int[] as loss_mask",
    );
    assert_eq!(
        e,
        format!("{}:row 1: column `input_ids[1]`: 18446744073709551615 does not fit a 32-bit integer", p.display())
    );
    let (p, e) = refusal(
        &dir,
        "ubig_mask.parquet",
        "select 'A' as pool, 'x__y-1' as instance_id, [1, 2]::int[] as input_ids, [0, 9223372036854775808]::ubigint[] as loss_mask",
    );
    assert_eq!(
        e,
        format!("{}:row 1: column `loss_mask[1]`: mask value 9223372036854775808 is outside -128..127", p.display())
    );
    // a null is still called null
    let (p, e) = refusal(
        &dir,
        "ubig_null.parquet",
        "select 'A' as pool, 'x__y-1' as instance_id, [1, null]::ubigint[] as input_ids, [0, 1]::int[] as loss_mask",
    );
    assert_eq!(e, format!("{}:row 1: column `input_ids[1]`: null; expected an integer", p.display()));
}

#[test]
fn symlink_loop_in_parquet_folder_reads_each_shard_once() {
    // a shard, a link to the folder's parent inside it, and a link to the shard itself
    let dir = scratch("loop");
    let pq = dir.join("pqloop");
    std::fs::create_dir_all(pq.join("x")).unwrap();
    duck(&format!(
        "copy (select 'P' as pool, 'demo__a-1' as instance_id, [1, 2, 3] as input_ids, [0, 1, 1] as loss_mask) to {}",
        lit(&pq.join("a.parquet"))
    ));
    std::os::unix::fs::symlink("..", pq.join("x/up")).unwrap();
    std::os::unix::fs::symlink("../a.parquet", pq.join("x/b.parquet")).unwrap();
    let conn = db();
    let out = load_views(&conn, &pq).unwrap();
    assert_eq!(
        out.iter().map(|o| loaded(o).path.clone()).collect::<Vec<_>>(),
        [pq.join("a.parquet").display().to_string()]
    );
    assert_eq!(rows(&conn, "select count(*) from sft_views"), ["1"]);
    // the command lists what it did not read
    let db_path = dir.join("v.duckdb");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .arg("--db")
        .arg(&db_path)
        .args(["load", "views"])
        .arg(&pq)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    let not_read: Vec<&str> = stdout.lines().filter(|l| l.starts_with("not read")).collect();
    assert_eq!(
        not_read,
        [
            format!(
                "not read: {} (a link to the folder .., not followed: name the folder to read it)",
                pq.join("x/up").display()
            ),
            format!(
                "not read: {} (the same file as {}, read once)",
                pq.join("x/b.parquet").display(),
                pq.join("a.parquet").display()
            ),
        ]
    );
    assert_eq!(stdout.lines().filter(|l| l.starts_with("loaded views")).count(), 1, "{stdout}");
}

/// A glob beside the database never matches the database's own files (found by a fresh
/// tester: `load views '*'` in the database's folder matched the file the load had just
/// made, refused it as "not a Parquet file" and left it behind).
#[test]
fn glob_beside_the_database_never_reads_the_database_itself() {
    let dir = scratch("glob-own-files");
    to_parquet(&samples().join("views.jsonl"), &dir.join("views.parquet"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sphragis"))
        .args(["--db", "t.duckdb", "load", "views", "--pool", "A", "*"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("views.parquet") && !stdout.contains("t.duckdb"), "{stdout}");
    let conn = sphragis::db::open_read_only(&dir.join("t.duckdb")).unwrap();
    assert_eq!(rows(&conn, "select count(*) from ingest_log"), ["1"]);
    assert_eq!(rows(&conn, "select count(*) from sft_views"), ["14"]);
    drop(conn);
    std::fs::remove_dir_all(dir).unwrap();
}
