//! Rendering a [`ReportTable`]: a terminal table, RFC 4180 CSV (with spreadsheet formula
//! cells neutralised unless asked raw) or JSON, each headed by the table's stamp.

use crate::table::{Cell, ReportTable};
use anyhow::Result;
use serde_json::json;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    /// RFC 4180 CSV, written as [`CsvStyle`] says.
    Csv(CsvStyle),
    Json,
}

impl Format {
    /// File extension for `--out`.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Table => "txt",
            Format::Csv(_) => "csv",
            Format::Json => "json",
        }
    }
}

/// How CSV is written. The default is CSV safe to open in a spreadsheet, without a
/// byte-order mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CsvStyle {
    /// Keep every cell exactly as the database holds it (CSV for programs): no
    /// neutralisation of formula-like text (see [`neutralise_formula`]).
    pub raw: bool,
    /// Start the output with a UTF-8 byte-order mark (EF BB BF), which some spreadsheet
    /// programs need to read UTF-8.
    pub bom: bool,
}

/// The characters that make a spreadsheet read a cell as a formula or a command when
/// they open it (OWASP "CSV Injection"): `=`, `+`, `-`, `@`, tab and carriage return.
pub const FORMULA_TRIGGERS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell as it is written to CSV meant for spreadsheets: text that begins with
/// one of [`FORMULA_TRIGGERS`] gets a leading single quote (`=HYPERLINK(..)` becomes
/// `'=HYPERLINK(..)`), the mitigation OWASP recommends, so a spreadsheet shows it as
/// text instead of evaluating it. Text that is a plain decimal number (`-3`, `+0.5`,
/// `-1.5e-3`) is left as it is: a spreadsheet reads it as that number, which cannot
/// run anything, and prefixing it would turn numbers into text. Numeric cells never
/// pass through here. Everything else is returned unchanged.
pub fn neutralise_formula(text: &str) -> std::borrow::Cow<'_, str> {
    if text.starts_with(FORMULA_TRIGGERS) && !is_plain_number(text) {
        std::borrow::Cow::Owned(format!("'{text}"))
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// Whether `text` is a plain decimal number: optional sign, digits with at most one
/// decimal point, optional exponent; no spaces, nothing else.
fn is_plain_number(text: &str) -> bool {
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let mut parts = mantissa.splitn(2, '.');
    let whole = parts.next().unwrap_or("");
    let fraction = parts.next().unwrap_or("");
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = digits(whole) && digits(fraction) && !(whole.is_empty() && fraction.is_empty());
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        !e.is_empty() && digits(e)
    });
    mantissa_ok && exponent_ok
}

/// Text of a cell as it appears in CSV: NULL is empty, floats keep full precision
/// (shortest round-trip form).
pub fn text(cell: &Cell) -> String {
    match cell {
        Cell::Null => String::new(),
        Cell::Bool(b) => b.to_string(),
        Cell::Int(v) => v.to_string(),
        Cell::UInt(v) => v.to_string(),
        Cell::Float(v) => v.to_string(),
        Cell::Text(s) => s.clone(),
        Cell::List(items) => format!("[{}]", items.iter().map(text).collect::<Vec<_>>().join(", ")),
        Cell::Struct { text, .. } => text.clone(),
    }
}

/// JSON value of a cell. NaN and infinities, which JSON numbers cannot hold, become the
/// strings "NaN", "Infinity", "-Infinity" (as Python's json writes them, quoted), never
/// a silent null; lists become arrays, structs objects (fields in their order).
fn json_value(cell: &Cell) -> serde_json::Value {
    match cell {
        Cell::Null => serde_json::Value::Null,
        Cell::Bool(b) => json!(b),
        Cell::Int(v) => json!(v),
        Cell::UInt(v) => json!(v),
        Cell::Float(v) if v.is_nan() => json!("NaN"),
        Cell::Float(v) if v.is_infinite() => json!(if *v > 0.0 { "Infinity" } else { "-Infinity" }),
        Cell::Float(v) => json!(v),
        Cell::Text(s) => json!(s),
        Cell::List(items) => serde_json::Value::Array(items.iter().map(json_value).collect()),
        Cell::Struct { fields, .. } => {
            serde_json::Value::Object(fields.iter().map(|(name, cell)| (name.clone(), json_value(cell))).collect())
        }
    }
}

/// The stamp every rendering carries: `<view|macro> <name> sha256 <hex>`, then
/// ` args (<literals>)` for a macro and ` where <filter>` when rows were filtered, e.g.
/// `macro sft_budget_at_v2 sha256 … args ([8], [500])`. Empty for an ad-hoc query.
pub fn stamp(table: &ReportTable) -> String {
    let Some(st) = &table.stamp else { return String::new() };
    let mut s = format!("{} {} sha256 {}", st.kind.as_str(), st.name, st.sha256);
    if let Some(a) = &st.arguments {
        s.push_str(&format!(" args ({a})"));
    }
    if let Some(f) = &st.filter {
        s.push_str(&format!(" where {f}"));
    }
    s
}

/// Renders a terminal table with a caption naming the report, view and SHA-256.
/// Floats are shown with 4 decimals here (CSV and JSON keep full precision).
pub fn render_table(table: &ReportTable) -> String {
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
    t.set_header(table.columns.clone());
    for row in &table.rows {
        t.add_row(row.iter().map(|v| match v {
            Cell::Float(d) => format!("{d:.4}"),
            Cell::Null => "NULL".to_string(),
            other => text(other),
        }));
    }
    for (i, _) in table.columns.iter().enumerate() {
        if table.rows.iter().all(|r| is_number(&r[i]))
            && let Some(c) = t.column_mut(i)
        {
            c.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    let caption = match &table.stamp {
        None => String::new(),
        Some(_) => format!("{} — {}\n{}\n", table.report, table.about, stamp(table)),
    };
    let n = table.rows.len();
    format!("{caption}{t}\n({n} {})\n", if n == 1 { "row" } else { "rows" })
}

fn is_number(v: &Cell) -> bool {
    matches!(v, Cell::Int(_) | Cell::UInt(_) | Cell::Float(_) | Cell::Null)
}

/// Renders RFC 4180 CSV with the csv crate: UTF-8, CRLF line ends, a header row, a
/// field quoted when it holds a comma, a quote (doubled) or a line break. Unless
/// `style.raw`, header and text cells pass through [`neutralise_formula`] (numbers,
/// booleans and NULL cannot start a formula and are written as they are); with
/// `style.bom` the text starts with a UTF-8 byte-order mark.
pub fn render_csv(table: &ReportTable, style: CsvStyle) -> Result<String> {
    let mut w = csv::WriterBuilder::new().terminator(csv::Terminator::CRLF).from_writer(Vec::new());
    let safe = |s: &str| if style.raw { s.to_string() } else { neutralise_formula(s).into_owned() };
    w.write_record(table.columns.iter().map(|c| safe(c)))?;
    for row in &table.rows {
        w.write_record(row.iter().map(|cell| match cell {
            Cell::Text(s) => safe(s),
            other => text(other),
        }))?;
    }
    let body = String::from_utf8(w.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?)?;
    Ok(if style.bom { format!("\u{feff}{body}") } else { body })
}

/// Renders JSON: `{"report", "kind", "name", "sha256", "arguments", "filter", "query",
/// "code_version", "columns", "rows": [{column: value}]}` (the stamp keys are null for
/// an ad-hoc query).
pub fn render_json(table: &ReportTable) -> Result<String> {
    Ok(serde_json::to_string_pretty(&json_document(table))?)
}

/// The JSON document [`render_json`] prints for `table`, as a value (so several tables
/// print as one array without parsing their text again: a double read back from text by
/// serde_json is not always the double written).
pub fn json_document(table: &ReportTable) -> serde_json::Value {
    let rows: Vec<serde_json::Value> = table
        .rows
        .iter()
        .map(|row| serde_json::Value::Object(table.columns.iter().cloned().zip(row.iter().map(json_value)).collect()))
        .collect();
    let st = table.stamp.as_ref();
    json!({
        "report": table.report,
        "kind": st.map(|s| s.kind.as_str()),
        "name": st.map(|s| &s.name),
        "sha256": st.map(|s| &s.sha256),
        "arguments": st.and_then(|s| s.arguments.as_ref()),
        "filter": st.and_then(|s| s.filter.as_ref()),
        "query": st.map(|s| &s.query),
        "code_version": crate::CODE_VERSION,
        "columns": table.columns,
        "rows": rows,
    })
}

/// Renders in `format`.
pub fn render(table: &ReportTable, format: Format) -> Result<String> {
    match format {
        Format::Table => Ok(render_table(table)),
        Format::Csv(style) => render_csv(table, style),
        Format::Json => render_json(table),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::views::SqlKind;
    use crate::table::{Stamp, query};
    use duckdb::Connection;

    fn table() -> ReportTable {
        ReportTable {
            report: "r".into(),
            stamp: Some(Stamp {
                kind: SqlKind::View,
                name: "x_v1".into(),
                sha256: "ab".into(),
                arguments: None,
                filter: None,
                query: "select * from x_v1 order by all".into(),
            }),
            about: "about".into(),
            columns: vec!["org".into(), "n".into(), "share".into()],
            rows: vec![
                vec![Cell::Text("qt, \"the\" company\nline".into()), Cell::Int(3), Cell::Float(0.125)],
                vec![Cell::Text("ünï".into()), Cell::Null, Cell::Float(1.0 / 3.0)],
            ],
        }
    }

    #[test]
    fn stamp_names_macro_arguments_and_filter() {
        let mut t = table();
        let st = t.stamp.as_mut().unwrap();
        st.kind = SqlKind::Macro;
        st.name = "m_at_v1".into();
        st.arguments = Some("[8], [500]".into());
        st.filter = Some("version = 'v3'".into());
        assert_eq!(stamp(&t), "macro m_at_v1 sha256 ab args ([8], [500]) where version = 'v3'");
        t.stamp = None;
        assert_eq!(stamp(&t), "");
    }

    #[test]
    fn csv_quotes_per_rfc4180() {
        let csv = render_csv(&table(), CsvStyle::default()).unwrap();
        assert_eq!(csv, "org,n,share\r\n\"qt, \"\"the\"\" company\nline\",3,0.125\r\nünï,,0.3333333333333333\r\n");
    }

    #[test]
    fn csv_neutralises_formula_cells() {
        for (given, written) in [
            ("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK(\"http://x\",\"y\")"),
            ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            ("-", "'-"),
            ("- item", "'- item"),
            ("-1e", "'-1e"),
            ("+.", "'+."),
            // plain numbers stay numbers; other text is untouched
            ("-3", "-3"),
            ("+0.5", "+0.5"),
            ("-1.5e-3", "-1.5e-3"),
            ("-.5", "-.5"),
            (" =1", " =1"),
            ("a=b", "a=b"),
            ("", ""),
        ] {
            assert_eq!(neutralise_formula(given), written, "{given:?}");
        }
    }

    #[test]
    fn csv_neutralises_text_and_header_but_not_numbers_unless_raw() {
        let t = ReportTable {
            report: String::new(),
            about: String::new(),
            stamp: None,
            columns: vec!["=h".into(), "n".into()],
            rows: vec![vec![Cell::Text("@x".into()), Cell::Int(-3)], vec![Cell::Text("-4".into()), Cell::Float(-0.5)]],
        };
        assert_eq!(render_csv(&t, CsvStyle::default()).unwrap(), "'=h,n\r\n'@x,-3\r\n-4,-0.5\r\n");
        let raw = CsvStyle { raw: true, bom: false };
        assert_eq!(render_csv(&t, raw).unwrap(), "=h,n\r\n@x,-3\r\n-4,-0.5\r\n");
        let bom = render_csv(&t, CsvStyle { raw: false, bom: true }).unwrap();
        assert_eq!(bom.as_bytes()[..3], [0xef, 0xbb, 0xbf]);
        assert_eq!(&bom[3..], "'=h,n\r\n'@x,-3\r\n-4,-0.5\r\n");
    }

    #[test]
    fn json_keeps_types() {
        let v: serde_json::Value = serde_json::from_str(&render_json(&table()).unwrap()).unwrap();
        assert_eq!(v["name"], "x_v1");
        assert_eq!(v["kind"], "view");
        assert_eq!(v["query"], "select * from x_v1 order by all");
        assert_eq!(v["rows"][0]["n"], 3);
        assert_eq!(v["rows"][1]["n"], serde_json::Value::Null);
        assert_eq!(v["rows"][0]["share"], 0.125);
    }

    #[test]
    fn table_names_the_view() {
        let t = render_table(&table());
        assert!(t.starts_with("r — about\nview x_v1 sha256 ab\n"), "{t}");
        assert!(t.contains("0.3333") && t.contains("NULL") && t.ends_with("(2 rows)\n"));
    }

    #[test]
    fn queries_render_every_type() {
        let conn = Connection::open_in_memory().unwrap();
        let t = query(
            &conn,
            "select null as n, 1::tinyint as i, 2::ubigint as u, 1.5::float as f, 'x' as s, true as b, \
             {'a': 1} as st, 'a\\x00b'::blob as bl, interval 2 day as iv, [1, 2] as l, \
             timestamp '2017-03-07 22:19:27' as ts, 12.50::decimal(5,2) as d, sum(x)::hugeint as h, \
             170141183460469231731687303715884105727::hugeint as big from (values (2), (4)) as t(x)",
            &[],
        )
        .unwrap();
        let row = &t.rows[0];
        assert_eq!(
            row[..6],
            [Cell::Null, Cell::Int(1), Cell::UInt(2), Cell::Float(1.5), Cell::Text("x".into()), Cell::Bool(true)]
        );
        for cell in row[7..9].iter().chain(&row[10..12]) {
            let Cell::Text(s) = cell else { panic!("{cell:?}") };
            assert!(!s.contains("OrderedMap") && !s.is_empty(), "{s}");
        }
        // a list is a list: an array in JSON, `[1, 2]` in text
        assert_eq!(row[9], Cell::List(vec![Cell::Int(1), Cell::Int(2)]));
        assert_eq!(text(&row[9]), "[1, 2]");
        assert_eq!(json_value(&row[9]), json!([1, 2]));
        assert_eq!(row[10], Cell::Text("2017-03-07T22:19:27".into()));
        assert_eq!(row[11], Cell::Text("12.50".into()));
        // integer sums are integers in JSON; beyond i64 they stay exact text
        assert_eq!(row[12], Cell::Int(6));
        assert_eq!(row[13], Cell::Text("170141183460469231731687303715884105727".into()));
        assert!(query(&conn, "  ", &[]).unwrap_err().to_string().contains("empty"));
        // a struct is an object in JSON, Arrow's `{a: 1}` in text
        assert_eq!(json_value(&row[6]), json!({"a": 1}));
        assert_eq!(text(&row[6]), "{a: 1}");
    }

    /// `examples --format json` printed a split's `prompt` (a list of comment structs) as
    /// Arrow's text, `"{comment_id: c1, …, message: a, b}"`, which no JSON reader
    /// can take apart when a message holds `, ` or `}`: structs are JSON objects now, in
    /// field order, nested values typed; the text formats are unchanged.
    #[test]
    fn struct_cells_are_json_objects_in_json() {
        let conn = Connection::open_in_memory().unwrap();
        let t = query(
            &conn,
            "select [{'role': 'user', 'content': 'a, b}'}, {'role': 'assistant', 'content': null}] as prompt, \
             {'n': 3, 'ids': [1, 2], 'at': timestamp '2024-01-02 03:04:05'} as nested",
            &[],
        )
        .unwrap();
        let row = &t.rows[0];
        assert_eq!(
            json_value(&row[0]),
            json!([{"role": "user", "content": "a, b}"}, {"role": "assistant", "content": null}])
        );
        let order: Vec<String> = match &row[1] {
            Cell::Struct { fields, .. } => fields.iter().map(|(n, _)| n.clone()).collect(),
            other => panic!("{other:?}"),
        };
        assert_eq!(order, ["n", "ids", "at"]);
        assert_eq!(json_value(&row[1]), json!({"n": 3, "ids": [1, 2], "at": "2024-01-02T03:04:05"}));
        assert_eq!(text(&row[0]), "[{role: user, content: a, b}}, {role: assistant, content: }]");
        let doc: serde_json::Value = serde_json::from_str(&render_json(&t).unwrap()).unwrap();
        assert_eq!(doc["rows"][0]["prompt"][0]["content"], "a, b}");
    }

    /// A float JSON cannot hold is written as Python's json names it, never as a null
    /// that reads like a missing value; nested lists keep their nulls.
    #[test]
    fn json_never_turns_nan_or_infinity_into_null() {
        assert_eq!(json_value(&Cell::Float(f64::NAN)), json!("NaN"));
        assert_eq!(json_value(&Cell::Float(f64::INFINITY)), json!("Infinity"));
        assert_eq!(json_value(&Cell::Float(f64::NEG_INFINITY)), json!("-Infinity"));
        let conn = Connection::open_in_memory().unwrap();
        let t = query(&conn, "select [['a', null], []] as l, 'nan'::double as n", &[]).unwrap();
        assert_eq!(json_value(&t.rows[0][0]), json!([["a", null], []]));
        assert_eq!(json_value(&t.rows[0][1]), json!("NaN"));
    }
}
