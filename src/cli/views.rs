//! `sphragis views`: the versioned SQL views recorded in the database, and
//! `sphragis views build`: render loaded trajectories into tokenized SFT views.

use super::{CliError, Ui};
use crate::sft::build::{
    BuildOptions, Policy, SourceFlags, build, loaded_trajectories, special_tokens, template_source,
};
use crate::sft::render::ChatTemplate;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub action: Option<Action>,
}

#[derive(Debug, clap::Subcommand)]
pub enum Action {
    /// Render loaded trajectories with a chat template and a tokenizer.json into view
    /// JSONL (ids, loss mask, message spans, keep_msgs, ledger), for `load views`.
    Build(BuildArgs),
    /// Cut the message spans of views loaded without --tokenizer into segments (header,
    /// thinking, text, tool_call, end_of_turn, content) for `report segments`, with the
    /// tokenizer they were made with; one transaction. (`load views --tokenizer` does it
    /// at load.)
    Segments(SegmentsArgs),
}

#[derive(Debug, clap::Args)]
pub struct SegmentsArgs {
    /// The tokenizer.json the views were made with.
    #[arg(long)]
    pub tokenizer: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    /// The tokenizer.json to tokenize with.
    #[arg(long)]
    pub tokenizer: PathBuf,
    /// A Jinja chat template file [default: the tokenizer's own, as Hugging Face finds it:
    /// chat_template.jinja, else tokenizer_config.json's chat_template, beside
    /// --tokenizer]. It must mark assistant output with {% generation %} blocks and be
    /// prefix-preserving; otherwise nothing is written.
    #[arg(long)]
    pub template: Option<PathBuf>,
    /// Pool name written on every view.
    #[arg(long)]
    pub pool: String,
    /// Supervision: all (every assistant message), final (the last one), window:I-J
    /// (assistant messages whose message index is in I..=J), keep:I,J,... (these
    /// messages, each an assistant message).
    #[arg(long, default_value = "all", value_parser = parse_policy)]
    pub policy: Policy,
    /// Messages the source marks as not trained (LLaMA-Factory `loss_weight: 0`, nebius
    /// `mask: false`): respect = never kept (all/final/window skip them and say so; keep:
    /// naming one is an error), ignore = kept like any assistant message.
    #[arg(long, value_enum, default_value = "respect")]
    pub source_flags: SourceFlags,
    /// Only this instance, every attempt of it, or one attempt by its key
    /// `<instance>#<attempt>` (repeatable); default: every loaded trajectory.
    #[arg(long = "instance")]
    pub instances: Vec<String>,
    /// Output JSONL file.
    #[arg(long)]
    pub out: PathBuf,
    /// The date the template's `strftime_now` formats, YYYY-MM-DD (midnight) or
    /// YYYY-MM-DDTHH:MM:SS, so views are reproducible [default: the local clock when the
    /// build starts, as Hugging Face reads it]. Recorded in each view's origin when the
    /// template calls strftime_now.
    #[arg(long, value_name = "DATE", value_parser = parse_date)]
    pub date: Option<chrono::NaiveDateTime>,
}

/// `--date`: `YYYY-MM-DD` (midnight) or `YYYY-MM-DDTHH:MM:SS`.
fn parse_date(text: &str) -> Result<chrono::NaiveDateTime, String> {
    // chrono's %Y and %m take any width ("26-1-5" would be year 26): the shape first
    let shape: String = text.chars().map(|c| if c.is_ascii_digit() { '9' } else { c }).collect();
    if shape != "9999-99-99" && shape != "9999-99-99T99:99:99" {
        return Err(format!("{text:?}: expected a date YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS"));
    }
    if let Ok(d) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(d.and_hms_opt(0, 0, 0).expect("midnight exists"));
    }
    chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .map_err(|_| format!("{text:?}: expected a date YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS"))
}

pub fn run(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    match args.action {
        Some(Action::Segments(a)) => {
            let t = crate::ingest::read::TokenizerFile::read(&a.tokenizer)?;
            let segmenter = crate::sft::segments::Segmenter::new(t.tokenizer, t.sha256);
            let conn = crate::db::open(db)?;
            let done = crate::sft::segments::derive_missing(&conn, &segmenter)?;
            if done.is_empty() {
                super::outln!("every loaded view file already has segments; nothing written")?;
            }
            for (file_id, path, d) in done {
                super::outln!("cut {} views of {path} (file_id {file_id}) into {} segments", d.views, d.segments)?;
            }
            Ok(())
        }
        None => {
            let conn = crate::db::open_read_only(db)?;
            let table = crate::report::query(&conn, crate::db::views::CATALOGUE, &[])?;
            super::out!("{}", crate::report::render_table(&table))?;
            Ok(())
        }
        Some(Action::Build(b)) => {
            let policy = b.policy;
            let policy_text = policy_label(&policy);
            // tokenizer.json is parsed on another thread while the database opens (each
            // takes a few tenths of a second); errors keep their order
            let read_tokenizer = || -> anyhow::Result<(Vec<u8>, tokenizers::Tokenizer)> {
                let bytes =
                    std::fs::read(&b.tokenizer).map_err(|e| anyhow::anyhow!("{}: {e}", b.tokenizer.display()))?;
                let tokenizer = tokenizers::Tokenizer::from_bytes(&bytes)
                    .map_err(|e| anyhow::anyhow!("{}: not a tokenizer.json: {e}", b.tokenizer.display()))?;
                Ok((bytes, tokenizer))
            };
            let (conn, source, (template, template_globals), (bytes, tokenizer)) =
                std::thread::scope(|scope| -> Result<_, CliError> {
                    let parsed = scope.spawn(read_tokenizer);
                    let conn = crate::db::open_read_only(db)?;
                    let source = template_source(b.template.as_deref(), &b.tokenizer)?;
                    let mut template =
                        ChatTemplate::new(&source.text).map_err(|e| anyhow::anyhow!("{}: {e:#}", source.origin))?;
                    // what HF passes to every template besides the conversation
                    let special = special_tokens(&b.tokenizer)?;
                    for (name, value) in &special.values {
                        template.add_global(name, value.clone());
                    }
                    if let Some(date) = b.date {
                        template.set_now(date);
                    }
                    let mut globals = serde_json::json!({
                        "special_tokens": special.to_json(),
                        "special_tokens_from": special.sources,
                    });
                    if source.text.contains("strftime_now") {
                        globals["strftime_now"] = template.now().format("%Y-%m-%dT%H:%M:%S").to_string().into();
                    }
                    let template = (template, globals);
                    let parsed = parsed.join().map_err(|_| anyhow::anyhow!("reading the tokenizer panicked"))??;
                    Ok((conn, source, template, parsed))
                })?;
            let loaded = loaded_trajectories(&conn)?;
            if loaded == 0 {
                return Err(anyhow::anyhow!(
                    "{}: no trajectories are loaded, so there is nothing to render; load them first with \
                     `sphragis --db {} load trajectories FILES... --tokenizer {}`",
                    db.display(),
                    db.display(),
                    b.tokenizer.display()
                )
                .into());
            }
            let total = if b.instances.is_empty() { loaded } else { b.instances.len() as u64 };
            let options = BuildOptions {
                pool: b.pool,
                policy,
                instances: b.instances,
                tokenizer_sha256: crate::hash::sha256_hex(&bytes),
                template_sha256: source.sha256,
                template_origin: source.origin,
                source_flags: b.source_flags,
                template_globals,
            };
            // Written beside the target and renamed on success: a failed build leaves no
            // partial file.
            let partial = PathBuf::from(format!("{}.partial", b.out.display()));
            let file = std::fs::File::create(&partial).map_err(|e| anyhow::anyhow!("{}: {e}", partial.display()))?;
            let mut out = std::io::BufWriter::new(file);
            let bar = ui.counter(format!("rendering into {}", b.out.display()), "trajectories", total);
            let built = build(&conn, &template, &tokenizer, &options, &mut out, &mut |n, _| bar.set_position(n));
            bar.finish_and_clear();
            use std::io::Write;
            let built = built.and_then(|b| out.flush().map(|_| b).map_err(Into::into));
            let built = match built {
                Ok(b) => b,
                Err(e) => {
                    drop(out);
                    let _ = std::fs::remove_file(&partial);
                    return Err(e.into());
                }
            };
            drop(out);
            crate::db::crash_point("views-build:before-rename");
            std::fs::rename(&partial, &b.out).map_err(|e| anyhow::anyhow!("{}: {e}", b.out.display()))?;
            if !built.unsupervised.is_empty() {
                eprintln!(
                    "warning: {} views keep no message under policy {} (no supervised token; they will fail the \
                     contract check trains_nothing): {}",
                    built.unsupervised.len(),
                    policy_text,
                    built.unsupervised.join(", ")
                );
            }
            if !built.hf_fallthrough.is_empty() {
                let ranges: usize = built.hf_fallthrough.iter().map(|(_, n)| n).sum();
                eprintln!(
                    "warning: {ranges} generation ranges in {} views end (or start) on characters no token covers; Hugging \
                     Face's return_assistant_tokens_mask would supervise such a range to the end of the sequence (or stop \
                     supervising), training on what the template did not mark. Their tokens were marked by overlap with the \
                     range instead, recorded in each view's origin.mask_rule: {}",
                    built.hf_fallthrough.len(),
                    built.hf_fallthrough.iter().map(|(i, n)| format!("{i} ({n})")).collect::<Vec<_>>().join(", ")
                );
            }
            if !built.source_untrained.is_empty() {
                let messages: usize = built.source_untrained.iter().map(|(_, m)| m.len()).sum();
                eprintln!(
                    "note: {messages} assistant messages in {} trajectories are marked not trained by their source \
                     (loss_weight 0 or mask false) and were not kept under policy {} (each view's origin lists them; \
                     --source-flags ignore keeps them): {}",
                    built.source_untrained.len(),
                    policy_text,
                    built.source_untrained.iter().map(|(i, m)| format!("{i} {m:?}")).collect::<Vec<_>>().join(", ")
                );
            }
            super::outln!(
                "wrote {} views to {}; load them with `sphragis --db {} load views {} --tokenizer {}`",
                built.written,
                b.out.display(),
                db.display(),
                b.out.display(),
                b.tokenizer.display()
            )?;
            Ok(())
        }
    }
}

/// `--policy` as clap parses it: the library's [`Policy::parse`], so a bad value is a
/// usage error (exit 2) with the accepted forms.
fn parse_policy(text: &str) -> Result<Policy, String> {
    Policy::parse(text).map_err(|e| e.to_string())
}

/// The policy as the user writes it (`all`, `final`, `window:I-J`, `keep:I,J`).
fn policy_label(policy: &Policy) -> String {
    match policy {
        Policy::AllAssistant => "all".into(),
        Policy::FinalReport => "final".into(),
        Policy::Window { from, to } => format!("window:{from}-{to}"),
        Policy::Keep(keep) => format!("keep:{}", keep.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(",")),
    }
}
