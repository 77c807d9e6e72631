//! `sphragis demo`: the main job on the bundled samples — build a database from
//! `data-samples/review/`, refine v2 (service accounts, rebase successors, dedup) and v3
//! (all rules, reconciled against v2), split v3 into the registered windows and halves,
//! freeze it (criteria and manifests into `<demo-db>.frozen/`; the sealed window's content
//! in `<demo-db>.sealed.duckdb`), check it with
//! `verify --reproduce`, load the SFT audit samples (`data-samples/sft/audit/`), the
//! trajectories in published shapes (`data-samples/sft/shapes/`: sharegpt, ms-swift,
//! several attempts, ATIF, Inspect) and two evaluation runs (`data-samples/runs/base`,
//! `ft2`), print
//! every report, and write the HTML report `<demo-db>.html` (e.g. `sphragis-demo.html`).

use super::{CliError, FormatArg, Ui};
use crate::ingest::InputKind;
use crate::ingest::LoadOutcome;
use crate::report::{self, REPORTS};
use crate::review::freeze::{VerifyOptions, freeze, verify_and_record};
use crate::review::load::load;
use crate::review::refine::{RefineOptions, Rule, refine};
use crate::review::splits;
use std::path::{Path, PathBuf};

/// The samples, embedded so the demo runs from any directory.
const SAMPLES: &[(&str, &[u8])] = &[
    ("review/orgs.json", include_bytes!("../../data-samples/review/orgs.json")),
    ("review/examples.jsonl", include_bytes!("../../data-samples/review/examples.jsonl")),
    ("review/openstack.jsonl", include_bytes!("../../data-samples/review/openstack.jsonl")),
    ("review/labels.jsonl", include_bytes!("../../data-samples/review/labels.jsonl")),
    ("sft/audit/demo__env-1.traj.json", include_bytes!("../../data-samples/sft/audit/demo__env-1.traj.json")),
    ("sft/audit/demo__fix-2.traj.json", include_bytes!("../../data-samples/sft/audit/demo__fix-2.traj.json")),
    ("sft/audit/broken__lint-3.traj.json", include_bytes!("../../data-samples/sft/audit/broken__lint-3.traj.json")),
    ("sft/audit/thinking.jsonl", include_bytes!("../../data-samples/sft/audit/thinking.jsonl")),
    ("sft/audit/views.jsonl", include_bytes!("../../data-samples/sft/audit/views.jsonl")),
    ("sft/audit/pools.json", include_bytes!("../../data-samples/sft/audit/pools.json")),
    ("sft/audit/manifest.json", include_bytes!("../../data-samples/sft/audit/manifest.json")),
    ("sft/audit/samples.sqlite", include_bytes!("../../data-samples/sft/audit/samples.sqlite")),
    (
        "sft/audit/logs/demo__env-1/report.json",
        include_bytes!("../../data-samples/sft/audit/logs/demo__env-1/report.json"),
    ),
    (
        "sft/audit/logs/demo__fix-2/report.json",
        include_bytes!("../../data-samples/sft/audit/logs/demo__fix-2/report.json"),
    ),
    (
        "sft/audit/logs/broken__lint-3/report.json",
        include_bytes!("../../data-samples/sft/audit/logs/broken__lint-3/report.json"),
    ),
    ("sft/shapes/sharegpt_agent.jsonl", include_bytes!("../../data-samples/sft/shapes/sharegpt_agent.jsonl")),
    ("sft/shapes/swift_agent.jsonl", include_bytes!("../../data-samples/sft/shapes/swift_agent.jsonl")),
    (
        "sft/shapes/attempts/nebius_attempts.json",
        include_bytes!("../../data-samples/sft/shapes/attempts/nebius_attempts.json"),
    ),
    (
        "sft/shapes/attempts/nebius_more_attempts.json",
        include_bytes!("../../data-samples/sft/shapes/attempts/nebius_more_attempts.json"),
    ),
    ("sft/shapes/atif/trajectory.json", include_bytes!("../../data-samples/sft/shapes/atif/trajectory.json")),
    (
        "sft/shapes/atif/trajectory.cont-1.json",
        include_bytes!("../../data-samples/sft/shapes/atif/trajectory.cont-1.json"),
    ),
    ("sft/shapes/inspect/calc.eval", include_bytes!("../../data-samples/sft/shapes/inspect/calc.eval")),
    ("sft/shapes/inspect/calc_epochs.json", include_bytes!("../../data-samples/sft/shapes/inspect/calc_epochs.json")),
    ("sft/packed/views.jsonl", include_bytes!("../../data-samples/sft/packed/views.jsonl")),
    ("runs/base/logs/demo__a-1/report.json", include_bytes!("../../data-samples/runs/base/logs/demo__a-1/report.json")),
    ("runs/base/logs/demo__b-2/report.json", include_bytes!("../../data-samples/runs/base/logs/demo__b-2/report.json")),
    ("runs/base/logs/demo__c-3/report.json", include_bytes!("../../data-samples/runs/base/logs/demo__c-3/report.json")),
    ("runs/base/logs/demo__d-4/report.json", include_bytes!("../../data-samples/runs/base/logs/demo__d-4/report.json")),
    ("runs/base/trajs/demo__a-1.traj.json", include_bytes!("../../data-samples/runs/base/trajs/demo__a-1.traj.json")),
    ("runs/base/trajs/demo__b-2.traj.json", include_bytes!("../../data-samples/runs/base/trajs/demo__b-2.traj.json")),
    ("runs/base/trajs/demo__c-3.traj.json", include_bytes!("../../data-samples/runs/base/trajs/demo__c-3.traj.json")),
    ("runs/base/trajs/demo__d-4.traj.json", include_bytes!("../../data-samples/runs/base/trajs/demo__d-4.traj.json")),
    ("runs/base/trajs/demo__e-5.traj.json", include_bytes!("../../data-samples/runs/base/trajs/demo__e-5.traj.json")),
    ("runs/ft2/results.json", include_bytes!("../../data-samples/runs/ft2/results.json")),
    ("runs/ft2/trajs/demo__a-1.traj.json", include_bytes!("../../data-samples/runs/ft2/trajs/demo__a-1.traj.json")),
    ("runs/ft2/trajs/demo__b-2.traj.json", include_bytes!("../../data-samples/runs/ft2/trajs/demo__b-2.traj.json")),
    ("runs/ft2/trajs/demo__c-3.traj.json", include_bytes!("../../data-samples/runs/ft2/trajs/demo__c-3.traj.json")),
    ("runs/ft2/trajs/demo__d-4.traj.json", include_bytes!("../../data-samples/runs/ft2/trajs/demo__d-4.traj.json")),
    ("runs/ft2/trajs/demo__e-5.traj.json", include_bytes!("../../data-samples/runs/ft2/trajs/demo__e-5.traj.json")),
];

/// The trajectory files in published shapes the demo loads, under `sft/shapes/` (their
/// figures by hand: `data-samples/sft/shapes/README.md`).
const SHAPES: &[&str] = &[
    "sharegpt_agent.jsonl",
    "swift_agent.jsonl",
    "attempts/nebius_attempts.json",
    "attempts/nebius_more_attempts.json",
    "atif/trajectory.json",
    "atif/trajectory.cont-1.json",
    "inspect/calc.eval",
    "inspect/calc_epochs.json",
];

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Directory with the samples [default: ./data-samples when it exists, else the
    /// embedded copies, written to `<db>.samples/`].
    #[arg(long)]
    pub samples: Option<PathBuf>,
    /// Output format of the reports.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    #[command(flatten)]
    pub csv: super::CsvArgs,
    /// Write report files here instead of printing.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(db: PathBuf, args: Args, ui: &Ui) -> Result<(), CliError> {
    let default = PathBuf::from("data-samples");
    let samples = match &args.samples {
        Some(dir) if dir.join("review/examples.jsonl").is_file() => dir.clone(),
        Some(dir) => {
            return Err(anyhow::anyhow!(
                "{}: no review/examples.jsonl here; is it a data-samples folder?",
                dir.display()
            )
            .into());
        }
        None if default.join("review/examples.jsonl").is_file() => default,
        None => {
            let dir = PathBuf::from(format!("{}.samples", db.display()));
            for (name, text) in SAMPLES {
                let path = dir.join(name);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&path, text)?;
            }
            dir
        }
    };
    if db.exists() && !crate::db::made_by_demo(&db) {
        return Err(anyhow::anyhow!(
            "{} exists and was not made by `sphragis demo`; the demo replaces its database, so pass another --db",
            db.display()
        )
        .into());
    }
    for suffix in ["", ".wal", ".sealed.duckdb", ".sealed.duckdb.wal"] {
        let path = PathBuf::from(format!("{}{suffix}", db.display()));
        if path.exists() {
            std::fs::remove_file(&path)?;
        }
    }
    let conn = crate::db::open(&db)?;
    crate::db::log(&conn, "demo", "made by sphragis demo")?;
    let say = |line: String| {
        if !ui.quiet {
            eprintln!("{line}");
        }
    };
    for (kind, file) in [
        (InputKind::Orgs, "review/orgs.json"),
        (InputKind::Examples, "review/examples.jsonl"),
        (InputKind::Examples, "review/openstack.jsonl"),
        (InputKind::Labels, "review/labels.jsonl"),
    ] {
        let path: PathBuf = samples.join(file);
        let bar = ui.spinner(format!("loading {}", path.display()), kind.record_noun());
        let outcome = load(&conn, kind, &path, None, &mut |n| bar.set_position(n))?;
        bar.finish_and_clear();
        if let LoadOutcome::Loaded(f) = outcome {
            say(format!("loaded {} {} ({} rows, sha256 {})", f.kind, display(&path), f.rows, f.sha256));
        }
    }
    say(format!(
        "sealed window content: {} examples kept in {}",
        crate::db::sealed::sealed_count(&conn)?,
        crate::db::sealed::companion_of(&db).display()
    ));
    let v2 = vec![Rule::ServiceAccount, Rule::RebaseSuccessor, Rule::Duplicate];
    for (version, base, rules) in [("v2", None, v2), ("v3", Some("v2"), Rule::ALL.to_vec())] {
        let s = refine(
            &conn,
            &RefineOptions {
                version: version.into(),
                base: base.map(String::from),
                rules,
                min_target_chars: crate::rules::normalize::DEFAULT_MIN_TARGET_CHARS as u32,
            },
        )?;
        say(format!("refined {}: {} built, {} removed, {} kept", s.version, s.built, s.removed, s.kept));
    }
    for (org, n) in splits::compute(&conn, "v3", None)? {
        say(format!("split v3 {org}: {n} kept examples"));
    }
    let frozen_dir = PathBuf::from(format!("{}.frozen", db.display()));
    let summary = freeze(&conn, "v3", &frozen_dir)?;
    say(format!("froze v3: {} files in {}", summary.written.len(), frozen_dir.display()));
    let differences = verify_and_record(&conn, "v3", &VerifyOptions::default())?;
    say(format!(
        "verify --reproduce v3: {}",
        if differences.is_empty() { "clean".to_string() } else { differences.join("; ") }
    ));
    // The SFT audit samples: trajectories, views, pool roles, split manifest.
    let audit = samples.join("sft/audit");
    for name in ["demo__env-1.traj.json", "demo__fix-2.traj.json", "broken__lint-3.traj.json", "thinking.jsonl"] {
        crate::sft::store::load_trajectories(&conn, &audit.join(name), None)?;
    }
    crate::sft::views::load(&conn, &audit.join("views.jsonl"), &Default::default(), &mut |_| {})?;
    crate::sft::pools::load(&conn, &audit.join("pools.json"))?;
    crate::sft::pools::load_manifest(&conn, &audit.join("manifest.json"))?;
    crate::sft::pools::load_samples(&conn, &audit.join("samples.sqlite"))?;
    for id in ["demo__env-1", "demo__fix-2", "broken__lint-3"] {
        crate::sft::store::load_outcome(&conn, &audit.join("logs").join(id).join("report.json"))?;
    }
    say(format!("loaded the SFT audit samples from {}", display(&audit)));
    // Trajectories in the shapes the field publishes (issue 27): no view trains on them, so
    // they add trajectories, instances and attempts, never pool figures.
    let shapes = samples.join("sft/shapes");
    for name in SHAPES {
        crate::sft::store::load_trajectories_all(&conn, &shapes.join(name), None)?;
    }
    say(format!("loaded {} trajectory files in published shapes from {}", SHAPES.len(), display(&shapes)));
    // Two evaluation runs of the runs walk-through (docs/runs.md).
    for (run, model) in [("base", "base-7b"), ("ft2", "ft-b")] {
        use crate::eval::load::{RunSpec, load_paths};
        let spec = RunSpec {
            name: run.into(),
            model: model.into(),
            harness: Some("mini-swe-agent-1.15.0".into()),
            continues: None,
            runaway_turns: 3,
        };
        let (outcomes, _) = load_paths(&conn, &spec, &[samples.join("runs").join(run)])?;
        say(format!("loaded run {run} (model {model}): {} files", outcomes.len()));
    }
    let tables = REPORTS.iter().map(|r| report::run(&conn, r, None)).collect::<anyhow::Result<Vec<_>>>()?;
    say(format!("database: {}\n", db.display()));
    // the HTML report beside the database: <db without extension>.html
    let html = db.with_extension("html");
    let html_context = report::ExportContext::of(&conn, &db, serde_json::json!({"report": "all"}))?;
    let page = report::html::render_html(&conn, &tables, None, &html_context, &Default::default())?;
    std::fs::write(&html, page).map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", html.display()))?;
    say(format!("HTML report: {}", html.display()));
    let context = match &args.out {
        Some(_) => html_context,
        None => report::ExportContext::default(),
    };
    super::report::print_or_write(&tables, args.format.with(args.csv)?, args.out.as_deref(), &context)?;
    // the verdict last, in a table, unless stdout holds CSV or JSON reports
    if args.format == FormatArg::Table || args.out.is_some() {
        super::check::demo_verdict(&db, &conn)?;
    }
    Ok(())
}

fn display(p: &Path) -> String {
    p.display().to_string()
}
