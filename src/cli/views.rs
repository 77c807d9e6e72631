//! `sphragis views`: the versioned SQL views recorded in the database, and
//! `sphragis views build`: render loaded trajectories into tokenized SFT views.

use super::{CliError, Ui};
use crate::sft::build::{BuildOptions, Policy, build, template_source};
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
    #[arg(long, default_value = "all")]
    pub policy: String,
    /// Only this instance (repeatable); default: every loaded trajectory.
    #[arg(long = "instance")]
    pub instances: Vec<String>,
    /// Output JSONL file.
    #[arg(long)]
    pub out: PathBuf,
}

pub fn run(db: &Path, args: Args, ui: &Ui) -> Result<(), CliError> {
    match args.action {
        None => {
            let conn = crate::db::open_read_only(db)?;
            let table = crate::report::query(
                &conn,
                "select name, kind, base_name, version, sha256, source, code_version, registered_at from sph_views order by base_name, version",
                &[],
            )?;
            super::out!("{}", crate::report::render_table(&table))?;
            Ok(())
        }
        Some(Action::Build(b)) => {
            let policy = Policy::parse(&b.policy).map_err(|error| CliError { error, exit_code: 2 })?;
            // tokenizer.json is parsed on another thread while the database opens (each
            // takes a few tenths of a second); errors keep their order
            let read_tokenizer = || -> anyhow::Result<(Vec<u8>, tokenizers::Tokenizer)> {
                let bytes = std::fs::read(&b.tokenizer).map_err(|e| anyhow::anyhow!("{}: {e}", b.tokenizer.display()))?;
                let tokenizer = tokenizers::Tokenizer::from_bytes(&bytes)
                    .map_err(|e| anyhow::anyhow!("{}: not a tokenizer.json: {e}", b.tokenizer.display()))?;
                Ok((bytes, tokenizer))
            };
            let (conn, source, template, (bytes, tokenizer)) = std::thread::scope(|scope| -> Result<_, CliError> {
                let parsed = scope.spawn(read_tokenizer);
                let conn = crate::db::open_read_only(db)?;
                let source = template_source(b.template.as_deref(), &b.tokenizer)?;
                let template = ChatTemplate::new(&source.text).map_err(|e| anyhow::anyhow!("{}: {e:#}", source.origin))?;
                let parsed = parsed.join().map_err(|_| anyhow::anyhow!("reading the tokenizer panicked"))??;
                Ok((conn, source, template, parsed))
            })?;
            let options = BuildOptions {
                pool: b.pool,
                policy,
                instances: b.instances,
                tokenizer_sha256: crate::hash::sha256_hex(&bytes),
                template_sha256: source.sha256,
                template_origin: source.origin,
            };
            // Written beside the target and renamed on success: a failed build leaves no
            // partial file.
            let partial = PathBuf::from(format!("{}.partial", b.out.display()));
            let file = std::fs::File::create(&partial).map_err(|e| anyhow::anyhow!("{}: {e}", partial.display()))?;
            let mut out = std::io::BufWriter::new(file);
            let bar = ui.spinner(format!("rendering into {}", b.out.display()));
            let built = build(&conn, &template, &tokenizer, &options, &mut out, &mut |n| bar.set_position(n));
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
            std::fs::rename(&partial, &b.out).map_err(|e| anyhow::anyhow!("{}: {e}", b.out.display()))?;
            if !built.unsupervised.is_empty() {
                eprintln!(
                    "warning: {} views keep no message under policy {} (no supervised token; they will fail the \
                     contract check trains_nothing): {}",
                    built.unsupervised.len(),
                    b.policy,
                    built.unsupervised.join(", ")
                );
            }
            super::outln!(
                "wrote {} views to {}; load them with `sphragis load views {}`",
                built.written,
                b.out.display(),
                b.out.display()
            )?;
            Ok(())
        }
    }
}
