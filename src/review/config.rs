//! Per-org configuration: service accounts, named date windows and the two registered
//! halves (SPEC §2.1, §2.4).
//!
//! A JSON file (documented in `docs/formats.md`), loaded like any input: recorded in
//! the ingest log with its SHA-256. Loading it replaces the configuration of every org
//! it names; orgs it does not name keep theirs.

use crate::ingest::InputError;
use crate::review::model::parse_timestamp;
use anyhow::Result;
use duckdb::{Connection, params};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(deserialize_with = "unique_keys")]
    orgs: BTreeMap<String, RawOrg>,
}

/// A JSON object as a map, refusing a key that appears twice (serde would keep the last).
fn unique_keys<'de, D, V>(deserializer: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: serde::Deserializer<'de>,
    V: Deserialize<'de>,
{
    struct Unique<V>(std::marker::PhantomData<V>);
    impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Unique<V> {
        type Value = BTreeMap<String, V>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object of orgs")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some(key) = map.next_key::<String>()? {
                if out.contains_key(&key) {
                    return Err(serde::de::Error::custom(format!("org {key:?} appears twice")));
                }
                let value = map.next_value()?;
                out.insert(key, value);
            }
            Ok(out)
        }
    }
    deserializer.deserialize_map(Unique(std::marker::PhantomData))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOrg {
    #[serde(default)]
    service_accounts: Vec<String>,
    #[serde(default)]
    windows: Vec<RawWindow>,
    #[serde(default)]
    halves: Option<RawHalves>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHalves {
    a: Vec<String>,
    b: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWindow {
    name: String,
    start: String,
    end: String,
    #[serde(default)]
    training: bool,
    #[serde(default)]
    sealed: bool,
}

/// One org's validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct OrgConfig {
    pub org: String,
    pub service_accounts: Vec<String>,
    pub windows: Vec<Window>,
    /// Projects of half `a` and half `b`; `None` when the file registers no halves.
    pub halves: Option<(Vec<String>, Vec<String>)>,
}

/// A named window `[starts_at, ends_at)`, in microseconds since the epoch (UTC).
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub name: String,
    pub starts_at: i64,
    pub ends_at: i64,
    pub training: bool,
    pub sealed: bool,
}

/// Parses and validates a configuration file.
///
/// Errors ([`InputError`] naming the line and field, e.g. `orgs.qt.windows[1].end`):
/// malformed JSON, unknown fields, a bad date, a window that ends before it starts,
/// overlapping windows, repeated window names, more than one training window, an empty
/// org name or account.
pub fn parse(path: &Path, mut reader: impl Read) -> Result<Vec<OrgConfig>> {
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|e| InputError::at(path, None, None, format!("cannot read: {e}")))?;
    let text = crate::ingest::json::utf8_document(path, &bytes)?;
    if text.trim().is_empty() {
        return Err(InputError::at(path, None, None, "file is empty").into());
    }
    let raw: RawFile = crate::ingest::json::parse_json(path, 1, text)?;
    let mut out = Vec::new();
    for (org, raw_org) in raw.orgs {
        let err = |field: String, msg: String| InputError::at(path, None, Some(&field), msg);
        if org.trim().is_empty() {
            return Err(err("orgs".into(), "an org name must not be empty".into()).into());
        }
        if let Some(i) = raw_org.service_accounts.iter().position(|a| a.trim().is_empty()) {
            return Err(err(format!("orgs.{org}.service_accounts[{i}]"), "must not be empty".into()).into());
        }
        let mut windows: Vec<Window> = Vec::new();
        for (i, w) in raw_org.windows.iter().enumerate() {
            let field = |name: &str| format!("orgs.{org}.windows[{i}].{name}");
            let starts_at = parse_timestamp(&w.start).map_err(|m| err(field("start"), m))?;
            let ends_at = parse_timestamp(&w.end).map_err(|m| err(field("end"), m))?;
            if ends_at <= starts_at {
                return Err(err(field("end"), format!("window {:?} must end after it starts", w.name)).into());
            }
            if w.training && w.sealed {
                return Err(
                    err(field("sealed"), format!("window {:?} cannot be both training and sealed", w.name)).into()
                );
            }
            if w.name.trim().is_empty() {
                return Err(err(field("name"), "must not be empty".into()).into());
            }
            if let Some(other) = windows.iter().find(|o| o.name == w.name) {
                return Err(err(field("name"), format!("window name {:?} repeats", other.name)).into());
            }
            if let Some(other) = windows.iter().find(|o| starts_at < o.ends_at && o.starts_at < ends_at) {
                return Err(err(field("start"), format!("window {:?} overlaps window {:?}", w.name, other.name)).into());
            }
            windows.push(Window { name: w.name.clone(), starts_at, ends_at, training: w.training, sealed: w.sealed });
        }
        if windows.iter().filter(|w| w.training).count() > 1 {
            return Err(err(format!("orgs.{org}.windows"), "more than one training window".into()).into());
        }
        if windows.iter().filter(|w| w.sealed).count() > 1 {
            return Err(err(format!("orgs.{org}.windows"), "more than one sealed window".into()).into());
        }
        let halves = match raw_org.halves {
            None => None,
            Some(h) => {
                for (name, list) in [("a", &h.a), ("b", &h.b)] {
                    if list.is_empty() {
                        return Err(err(
                            format!("orgs.{org}.halves.{name}"),
                            "a half needs at least one project".into(),
                        )
                        .into());
                    }
                    if let Some(i) = list.iter().position(|p| p.trim().is_empty()) {
                        return Err(err(format!("orgs.{org}.halves.{name}[{i}]"), "must not be empty".into()).into());
                    }
                }
                if let Some(p) = h.a.iter().find(|p| h.b.contains(p)) {
                    return Err(err(format!("orgs.{org}.halves.b"), format!("project {p:?} is in both halves")).into());
                }
                Some((h.a, h.b))
            }
        };
        out.push(OrgConfig { org, service_accounts: raw_org.service_accounts, windows, halves });
    }
    Ok(out)
}

/// Replaces the stored configuration of each org in `configs` (inside the caller's
/// transaction). Returns the number of orgs written.
pub fn store(conn: &Connection, file_id: i32, configs: &[OrgConfig]) -> Result<i64> {
    for c in configs {
        conn.execute("delete from org_config where org = ?", [&c.org])?;
        conn.execute("delete from org_service_accounts where org = ?", [&c.org])?;
        conn.execute("delete from org_windows where org = ?", [&c.org])?;
        conn.execute("delete from org_halves where org = ?", [&c.org])?;
        if let Some((a, b)) = &c.halves {
            for (half, projects) in [("a", a), ("b", b)] {
                let mut projects: Vec<&String> = projects.iter().collect();
                projects.sort();
                projects.dedup();
                for p in projects {
                    conn.execute("insert into org_halves values (?, ?, ?)", params![c.org, half, p])?;
                }
            }
        }
        conn.execute(
            "insert into org_config (org, file_id, registered_at) values (?, ?, current_timestamp)",
            params![c.org, file_id],
        )?;
        let mut accounts: Vec<&String> = c.service_accounts.iter().collect();
        accounts.sort();
        accounts.dedup();
        for a in accounts {
            conn.execute("insert into org_service_accounts values (?, ?)", params![c.org, a])?;
        }
        for w in &c.windows {
            conn.execute(
                "insert into org_windows values (?, ?, make_timestamp(?), make_timestamp(?), ?, ?)",
                params![c.org, w.name, w.starts_at, w.ends_at, w.sealed, w.training],
            )?;
        }
    }
    Ok(configs.len() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Vec<OrgConfig>, String> {
        parse(Path::new("orgs.json"), text.as_bytes()).map_err(|e| e.to_string())
    }

    #[test]
    fn parses_windows_and_accounts() {
        let got = parse_str(
            r#"{"orgs": {"qt": {"service_accounts": ["qt-ci"], "windows": [
                {"name": "train", "start": "2020-01-01", "end": "2021-01-01", "training": true},
                {"name": "test", "start": "2021-01-01", "end": "2022-01-01", "sealed": true}]}}}"#,
        )
        .unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].windows[0].starts_at, 1_577_836_800_000_000); // date -u -d 2020-01-01 +%s
        assert!(got[0].windows[1].sealed && !got[0].windows[1].training);
    }

    #[test]
    fn refuses_bad_windows() {
        let err = parse_str(
            r#"{"orgs": {"qt": {"windows": [{"name": "a", "start": "2020-01-01", "end": "2020-06-01"},
               {"name": "b", "start": "2020-05-01", "end": "2020-09-01"}]}}}"#,
        )
        .unwrap_err();
        assert!(err.contains("field `orgs.qt.windows[1].start`: window \"b\" overlaps window \"a\""), "{err}");
        let err =
            parse_str(r#"{"orgs": {"qt": {"windows": [{"name": "a", "start": "2020-06-01", "end": "2020-01-01"}]}}}"#)
                .unwrap_err();
        assert!(err.contains("orgs.qt.windows[0].end"), "{err}");
        let err = parse_str(r#"{"orgs": {"qt": {"windows": [{"name": "a", "start": "June", "end": "2020-01-01"}]}}}"#)
            .unwrap_err();
        assert!(err.contains("orgs.qt.windows[0].start`: not a timestamp"), "{err}");
        let err = parse_str(r#"{"orgs": {"qt": {"halves": {"a": ["x"], "b": ["y", "x"]}}}}"#).unwrap_err();
        assert!(err.contains("field `orgs.qt.halves.b`: project \"x\" is in both halves"), "{err}");
        let err = parse_str(r#"{"orgs": {"qt": {"halves": {"a": [], "b": ["y"]}}}}"#).unwrap_err();
        assert!(err.contains("orgs.qt.halves.a`: a half needs at least one project"), "{err}");
        let err = parse_str(r#"{"orgs": {"qt": {}, "qt": {"service_accounts": []}}}"#).unwrap_err();
        assert!(err.contains("org \"qt\" appears twice"), "{err}");
        let two_sealed = r#"{"orgs": {"qt": {"windows": [{"name": "a", "start": "2020-01-01", "end": "2020-02-01", "sealed": true},
            {"name": "b", "start": "2020-02-01", "end": "2020-03-01", "sealed": true}]}}}"#;
        assert!(parse_str(two_sealed).unwrap_err().contains("more than one sealed window"));
        let both = r#"{"orgs": {"qt": {"windows": [{"name": "a", "start": "2020-01-01", "end": "2020-02-01", "sealed": true, "training": true}]}}}"#;
        assert!(parse_str(both).unwrap_err().contains("both training and sealed"));
        let bom = "\u{feff}{\"orgs\": {\"qt\": {}}}";
        assert_eq!(parse_str(bom).unwrap().len(), 1, "a byte-order mark is skipped");
        let err = parse_str(r#"{"orgs": {"qt": {"bots": []}}}"#).unwrap_err();
        assert!(err.contains("unknown field `bots`"), "{err}");
        assert!(parse_str("").unwrap_err().contains("file is empty"));
    }
}
