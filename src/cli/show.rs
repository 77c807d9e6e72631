//! `sphragis show view VIEW_ID`: the token-level loss-mask viewer of one SFT view, on a
//! terminal (ANSI colours or plain text) or as an offline HTML page.

use super::CliError;
use crate::show::{MaskOptions, load, mask_view_page, terminal};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// The tokens of one SFT view coloured by loss mask (supervised = mask 1), grouped by
    /// message span with role, index and kept / not kept, with exposure and the recovery
    /// region per position when pools are loaded, and the first offending position of a
    /// failed contract check highlighted. Tokens are decoded one position at a time with
    /// the view's tokenizer (a byte-level piece that is not UTF-8 on its own is shown as
    /// its bytes, \xNN); without one, token ids are shown.
    View(ViewArgs),
}

/// Output of `show view`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShowFormat {
    /// Colours (ANSI SGR codes), even when not on a terminal or with NO_COLOR set.
    Ansi,
    /// Plain text: supervised runs in ⟦ ⟧, offending positions in ⟪! !⟫.
    Text,
    /// One self-contained HTML page (no script, no network): a legend and one
    /// collapsible section per message.
    Html,
}

#[derive(Debug, clap::Args)]
pub struct ViewArgs {
    /// The view_id (list them with `sphragis sql "select view_id from sft_views"`).
    pub view_id: String,
    /// Output format [default: html when --out ends in .html or .htm; ansi on a terminal
    /// unless NO_COLOR is set; text otherwise].
    #[arg(long, value_enum)]
    pub format: Option<ShowFormat>,
    /// Write to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// The tokenizer.json to decode with. Required when the view records a tokenizer
    /// (`load views --tokenizer`, or `views build`, which writes its SHA-256 into the
    /// view's origin): its SHA-256 must be that one. A view that records none is decoded
    /// with it as given.
    #[arg(long, value_name = "FILE", conflicts_with = "ids")]
    pub tokenizer: Option<PathBuf>,
    /// Show token ids instead of decoding, even when the view records a tokenizer.
    #[arg(long)]
    pub ids: bool,
}

pub fn run(db: &Path, args: Args) -> Result<(), CliError> {
    let What::View(a) = args.what;
    let format = a.format.unwrap_or_else(|| {
        let html_out = a.out.as_ref().and_then(|p| p.extension()).is_some_and(|e| e == "html" || e == "htm");
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        if html_out {
            ShowFormat::Html
        } else if a.out.is_none() && std::io::stdout().is_terminal() && !no_color {
            ShowFormat::Ansi
        } else {
            ShowFormat::Text
        }
    });
    let tokenizer = a.tokenizer.as_deref().map(crate::ingest::read::TokenizerFile::read).transpose()?;
    let options = MaskOptions { tokenizer: tokenizer.as_ref(), ids_when_no_tokenizer: a.ids };
    let conn = crate::db::open_read_only(db)?;
    let rendered = match format {
        ShowFormat::Html => mask_view_page(&conn, &a.view_id, &options)?,
        ShowFormat::Ansi | ShowFormat::Text => {
            terminal::render(&load(&conn, &a.view_id, &options)?, format == ShowFormat::Ansi)
        }
    };
    match &a.out {
        Some(path) => {
            std::fs::write(path, rendered).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            super::outln!("wrote the loss mask of view {} to {}", a.view_id, path.display())?;
        }
        None => super::out!("{rendered}")?,
    }
    Ok(())
}
