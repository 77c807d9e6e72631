//! The token-level loss-mask viewer (issue 13): one SFT view's tokens, decoded one
//! position at a time, coloured by loss mask, grouped by message span.
//!
//! [`load`] reads a view through the table macro `sft_view_positions_at_v1` (one row per
//! position: token id, mask, span, kept, exposure, recovery region) and the contract view
//! `sft_contract_failures_v1`, and decodes each token with the view's tokenizer;
//! [`html`] renders the result as an HTML fragment ([`mask_view_html`], embedded by the
//! HTML report) or a whole offline page, [`terminal`] as ANSI colours or plain text.
//!
//! Decoding is per position, never merged: a byte-level BPE piece that is not valid UTF-8
//! on its own (half of a multi-byte character) is shown as its bytes (`\xe2\x80`), marked
//! as such, so the colour of every position is exact.
//!
//! ```no_run
//! # fn main() -> anyhow::Result<()> {
//! let conn = sphragis::db::open_read_only(std::path::Path::new("sphragis.duckdb"))?;
//! let options = sphragis::show::MaskOptions { tokenizer: None, ids_when_no_tokenizer: true };
//! let fragment = sphragis::show::mask_view_html(&conn, "A:demo__env-1", &options)?;
//! # let _ = fragment; Ok(()) }
//! ```

pub mod html;
pub mod terminal;

use crate::ingest::read::TokenizerFile;
use anyhow::{Context, Result, bail};
use duckdb::{Connection, OptionalExt, params};

pub use html::{MASK_CSS, mask_view_html, mask_view_page};

const VIEW_SQL: &str = include_str!("../../sql/steps/mask_view.sql");
const SPANS_SQL: &str = include_str!("../../sql/steps/mask_view_spans.sql");
const NEAR_SQL: &str = include_str!("../../sql/steps/mask_view_near.sql");
const FAILURES_SQL: &str = include_str!("../../sql/steps/mask_view_failures.sql");
/// The table macro that gives one row per position of a view.
pub const POSITIONS_MACRO: &str = "sft_view_positions_at_v1";
/// The contract view whose failures are highlighted.
pub const FAILURES_VIEW: &str = "sft_contract_failures_v1";

/// How a view's tokens are decoded.
#[derive(Clone, Copy, Default)]
pub struct MaskOptions<'a> {
    /// The `tokenizer.json` to decode with. When the view records a tokenizer (the
    /// SHA-256 given at `load views --tokenizer`, or the one `views build` wrote into its
    /// origin), this file must have that SHA-256.
    pub tokenizer: Option<&'a TokenizerFile>,
    /// When the view records a tokenizer and `tokenizer` is `None`: show token ids (true,
    /// and say so in the output) or fail naming the SHA-256 to pass (false).
    pub ids_when_no_tokenizer: bool,
}

/// How the tokens of a [`MaskView`] were turned into text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoding {
    /// Decoded with this tokenizer: its path (a label) and SHA-256, and whether the view
    /// records it (false: the view records none and the given file was used as is).
    Tokenizer { path: String, sha256: String, recorded: bool },
    /// Token ids shown, for this reason (a sentence).
    Ids { reason: String },
}

/// What one position shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Decoded text of the token alone.
    Text(String),
    /// A byte-level piece that is not valid UTF-8 on its own, as `\xNN` escapes (or the
    /// vocabulary piece when it is not byte-level).
    Bytes(String),
    /// The token id (no tokenizer, or an id the tokenizer does not know).
    Id(i64),
    /// No token id at this position (the mask is longer than the ids).
    Missing,
}

/// One message span of a view, as loaded (end exclusive), and whether its message is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// Ordinal, message index, role and token range, as the segment cutter reads them.
    pub message: crate::sft::segments::Span,
    /// An assistant message kept for loss (`None` for other roles).
    pub kept: Option<bool>,
}

/// One token position of a view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    /// 0-based token index.
    pub position: i64,
    pub token_id: Option<i64>,
    /// The loss-mask value as loaded (`None` past the end of the mask).
    pub mask: Option<i64>,
    /// Ordinal of the first span holding the position (`None`: outside every span).
    pub span: Option<i32>,
    /// Training views of the instance that supervise this position.
    pub exposure: i64,
    /// In the instance's recovery region (`None`: no pool has the recovery role).
    pub recovery: Option<bool>,
    pub piece: Piece,
}

impl Position {
    /// Whether the position is supervised (mask value 1).
    pub fn supervised(&self) -> bool {
        self.mask == Some(1)
    }
}

/// A failed contract check of the view (a row of `sft_contract_failures_v1`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub check_name: String,
    /// The first offending token position, when the check names one.
    pub token_position: Option<i64>,
    pub detail: String,
}

/// One SFT view ready to render.
#[derive(Debug, Clone)]
pub struct MaskView {
    pub view_id: String,
    pub pool: String,
    pub instance_id: String,
    pub n_ids: i64,
    pub n_mask: i64,
    pub mask_source: String,
    /// Positions with mask value 1.
    pub supervised: i64,
    pub decoding: Decoding,
    pub spans: Vec<Span>,
    /// Every position, in order: `0 .. max(n_ids, n_mask)`.
    pub positions: Vec<Position>,
    pub failures: Vec<Failure>,
    /// Stamps of the SQL the rows came from, as reports print them
    /// (`macro sft_view_positions_at_v1 sha256 ... args ('id')`).
    pub stamps: Vec<String>,
}

impl MaskView {
    /// The first offending token position over every failed check, if any names one.
    pub fn first_offending(&self) -> Option<&Failure> {
        self.failures.iter().filter(|f| f.token_position.is_some()).min_by_key(|f| f.token_position)
    }

    /// Whether any position lies in a recovery region that is known (a pool has the
    /// recovery role).
    pub fn recovery_known(&self) -> bool {
        self.positions.iter().any(|p| p.recovery.is_some())
    }

    /// The span with this ordinal.
    pub fn span(&self, ordinal: i32) -> Option<&Span> {
        self.spans.iter().find(|s| s.message.ordinal == ordinal)
    }

    /// Runs of consecutive positions lying in the same span (or outside every span):
    /// `(span ordinal, first index, end index)` into [`MaskView::positions`]. Spans that
    /// overlap or come out of order (a contract failure) still give every position once.
    pub fn groups(&self) -> Vec<(Option<i32>, usize, usize)> {
        let mut groups: Vec<(Option<i32>, usize, usize)> = Vec::new();
        for (i, p) in self.positions.iter().enumerate() {
            match groups.last_mut() {
                Some(g) if g.0 == p.span => g.2 = i + 1,
                _ => groups.push((p.span, i, i + 1)),
            }
        }
        groups
    }
}

/// Reads view `view_id` with its positions, spans and contract failures, and decodes its
/// tokens as `options` say.
///
/// Errors: no view has that id (the message names it and how to list the ids, with up to
/// five loaded ids that contain it); the view records a tokenizer and none was given
/// while `ids_when_no_tokenizer` is false (the message names the SHA-256 to pass with
/// `--tokenizer`); the given tokenizer's SHA-256 differs from the one the view records; a
/// query fails.
pub fn load(conn: &Connection, view_id: &str, options: &MaskOptions) -> Result<MaskView> {
    type Head = (String, String, i64, i64, String, Option<String>, Option<String>, i64);
    let head: Option<Head> = conn
        .query_row(VIEW_SQL, params![view_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(7)?, r.get(8)?, r.get(9)?))
        })
        .optional()
        .context("show view step sql/steps/mask_view.sql")?;
    let Some((pool, instance_id, n_ids, n_mask, mask_source, recorded_sha, recorded_from, supervised)) = head else {
        return Err(unknown_view(conn, view_id));
    };
    let decoding = match (options.tokenizer, recorded_sha) {
        (Some(t), Some(sha)) if t.sha256 != sha => bail!(
            "view {view_id} records tokenizer sha256 {sha} (from {}), but {} has sha256 {}: decoding with another \
             tokenizer would show other text; pass the tokenizer.json the view was made with",
            describe_from(recorded_from.as_deref()),
            t.path.display(),
            t.sha256
        ),
        (Some(t), recorded) => Decoding::Tokenizer {
            path: t.path.display().to_string(),
            sha256: t.sha256.clone(),
            recorded: recorded.is_some(),
        },
        (None, Some(sha)) if options.ids_when_no_tokenizer => Decoding::Ids {
            reason: format!(
                "token ids shown: the view records tokenizer sha256 {sha}; pass --tokenizer FILE to decode"
            ),
        },
        (None, Some(sha)) => bail!(
            "view {view_id} records tokenizer sha256 {sha} (from {}), and the database holds no tokenizer file: \
             pass --tokenizer FILE (the tokenizer.json with that SHA-256) to decode its tokens, or --ids to show \
             token ids",
            describe_from(recorded_from.as_deref())
        ),
        (None, None) => Decoding::Ids {
            reason: "token ids shown: the view records no tokenizer and none was given (--tokenizer FILE decodes)"
                .into(),
        },
    };
    let spans = {
        let mut stmt = conn.prepare(SPANS_SQL)?;
        stmt.query_map(params![view_id], |r| {
            Ok(Span {
                message: crate::sft::segments::Span {
                    ordinal: r.get(0)?,
                    msg_index: r.get(1)?,
                    role: r.get(2)?,
                    start: r.get(3)?,
                    end: r.get(4)?,
                },
                kept: r.get(5)?,
            })
        })?
        .collect::<duckdb::Result<Vec<_>>>()
        .context("show view step sql/steps/mask_view_spans.sql")?
    };
    let tokenizer = options.tokenizer.filter(|_| matches!(decoding, Decoding::Tokenizer { .. }));
    let positions = {
        let sql = format!(
            "select position, token_id, mask, span_ordinal, exposure, recovery from {POSITIONS_MACRO}(?) order by position"
        );
        let mut stmt = conn.prepare(&sql)?;
        stmt.query_map(params![view_id], |r| {
            let token_id: Option<i64> = r.get(1)?;
            Ok(Position {
                position: r.get(0)?,
                token_id,
                mask: r.get(2)?,
                span: r.get(3)?,
                exposure: r.get(4)?,
                recovery: r.get(5)?,
                piece: match (token_id, tokenizer) {
                    (None, _) => Piece::Missing,
                    (Some(id), Some(t)) => decode_token(&t.tokenizer, id),
                    (Some(id), None) => Piece::Id(id),
                },
            })
        })?
        .collect::<duckdb::Result<Vec<_>>>()
        .with_context(|| format!("reading the positions of view {view_id} from {POSITIONS_MACRO}"))?
    };
    let failures = {
        let mut stmt = conn.prepare(FAILURES_SQL)?;
        stmt.query_map(params![view_id], |r| {
            Ok(Failure {
                check_name: r.get(0)?,
                token_position: r.get(2)?,
                detail: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
            })
        })?
        .collect::<duckdb::Result<Vec<_>>>()
        .context("show view step sql/steps/mask_view_failures.sql")?
    };
    let literal = crate::table::sql_literal(view_id);
    let stamps = vec![
        format!("macro {POSITIONS_MACRO} sha256 {} args ({literal})", definition_sha256(POSITIONS_MACRO)),
        format!("view {FAILURES_VIEW} sha256 {} where view_id = {literal}", definition_sha256(FAILURES_VIEW)),
    ];
    Ok(MaskView {
        view_id: view_id.to_string(),
        pool,
        instance_id,
        n_ids,
        n_mask,
        mask_source,
        supervised,
        decoding,
        spans,
        positions,
        failures,
        stamps,
    })
}

fn describe_from(from: Option<&str>) -> &'static str {
    match from {
        Some("load") => "`load views --tokenizer`",
        _ => "its origin, written by `views build`",
    }
}

fn definition_sha256(name: &str) -> String {
    crate::db::views::find(name).map(|f| f.sha256()).unwrap_or_else(|| "unknown".into())
}

/// The error for an id no view has: names the id, up to five loaded ids that contain it
/// (or whose instance it is), and the query that lists them all.
fn unknown_view(conn: &Connection, view_id: &str) -> anyhow::Error {
    let near: Vec<String> = conn
        .prepare(NEAR_SQL)
        .and_then(|mut s| s.query_map(params![view_id], |r| r.get(0))?.collect())
        .unwrap_or_default();
    let near = if near.is_empty() { String::new() } else { format!(" (loaded ids like it: {})", near.join(", ")) };
    anyhow::anyhow!(
        "no SFT view has view_id '{view_id}'{near}; list the loaded view ids with \
         `sphragis sql \"select view_id, pool, instance_id from sft_views order by view_id\"`"
    )
}

/// Decodes one token id on its own, as [`Piece`]: its text; or, when that text is not
/// valid UTF-8 on its own (the decoder gives U+FFFD for a piece the vocabulary does not
/// spell so), the piece's bytes (byte-level BPE, GPT-2's byte-to-character alphabet) as
/// `\xNN` escapes, else the vocabulary piece itself; an id the tokenizer does not know
/// (or that is negative) shows as [`Piece::Id`].
pub fn decode_token(tokenizer: &tokenizers::Tokenizer, id: i64) -> Piece {
    let Ok(id32) = u32::try_from(id) else { return Piece::Id(id) };
    let Some(piece) = tokenizer.id_to_token(id32) else { return Piece::Id(id) };
    let text = tokenizer.decode(&[id32], false).unwrap_or_default();
    if text.contains('\u{fffd}') && !piece.contains('\u{fffd}') {
        return Piece::Bytes(match byte_level_bytes(&piece) {
            Some(bytes) => bytes.iter().map(|b| format!("\\x{b:02x}")).collect(),
            None => piece,
        });
    }
    if text.is_empty() { Piece::Text(piece) } else { Piece::Text(text) }
}

/// The bytes a byte-level BPE piece stands for, reading each character through the
/// byte-to-character alphabet of GPT-2's byte-level BPE (printable Latin-1 bytes stand
/// for themselves; the other 68 bytes, in order, for U+0100 onwards). `None` when a
/// character is outside that alphabet (the piece is not byte-level).
pub fn byte_level_bytes(piece: &str) -> Option<Vec<u8>> {
    let printable = |b: u32| (0x21..=0x7e).contains(&b) || (0xa1..=0xac).contains(&b) || (0xae..=0xff).contains(&b);
    piece
        .chars()
        .map(|c| {
            let c = c as u32;
            if printable(c) {
                return Some(c as u8);
            }
            // the n-th non-printable byte is spelt U+0100 + n
            let n = c.checked_sub(0x100)?;
            (0u32..=255).filter(|b| !printable(*b)).nth(n as usize).map(|b| b as u8)
        })
        .collect()
}

/// `token 4` for one position, `tokens 4–9` for several (both ends included).
pub fn positions_label(lo: i64, hi: i64) -> String {
    if lo == hi { format!("token {lo}") } else { format!("tokens {lo}–{hi}") }
}

/// Text safe to show: control characters (other than newline and tab) and bidirectional
/// overrides written as `\xNN` / `\u{NNNN}` escapes, so a token cannot move the cursor,
/// restyle a terminal or reorder the line it is shown in.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        (c.is_control() && c != '\n' && c != '\t') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hidden) {
        return text.into();
    }
    text.chars()
        .map(|c| match c {
            c if hidden(c) && (c as u32) < 0x100 => format!("\\x{:02x}", c as u32),
            c if hidden(c) => format!("\\u{{{:04x}}}", c as u32),
            c => c.to_string(),
        })
        .collect::<String>()
        .into()
}

/// The text a position shows (before escaping for the output format): decoded text with
/// control characters made visible, byte escapes, the id, or `∅` past the ids.
pub fn shown(piece: &Piece) -> String {
    match piece {
        Piece::Text(t) => visible(t).into_owned(),
        Piece::Bytes(b) => b.clone(),
        Piece::Id(id) => id.to_string(),
        Piece::Missing => "∅".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte-level BPE tokenizer with `é` (bytes c3 a9, spelt `Ã©`) and its two halves.
    fn byte_level() -> tokenizers::Tokenizer {
        let json = r#"{
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [], "normalizer": null,
            "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
            "post_processor": null,
            "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true},
            "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                      "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                      "vocab": {"Ã": 0, "©": 1, "Ã©": 2, "a": 3, "Ġ": 4, "Ċ": 5}, "merges": [["Ã", "©"]]}
        }"#;
        tokenizers::Tokenizer::from_bytes(json.as_bytes()).unwrap()
    }

    #[test]
    fn half_a_character_is_shown_as_its_bytes_not_merged() {
        let t = byte_level();
        assert_eq!(decode_token(&t, 0), Piece::Bytes("\\xc3".into()));
        assert_eq!(decode_token(&t, 1), Piece::Bytes("\\xa9".into()));
        assert_eq!(decode_token(&t, 2), Piece::Text("é".into()));
        assert_eq!(decode_token(&t, 4), Piece::Text(" ".into()));
        assert_eq!(decode_token(&t, 5), Piece::Text("\n".into()));
        // ids the tokenizer does not know, or negative ones, stay ids
        assert_eq!(decode_token(&t, 99), Piece::Id(99));
        assert_eq!(decode_token(&t, -100), Piece::Id(-100));
    }

    #[test]
    fn byte_level_alphabet_round_trips() {
        // `Ġ` is the space (0x20), `Ċ` the newline (0x0a), `Ń` (U+0143, n = 67)
        // the non-printable byte 0xad, printable bytes stand for themselves
        assert_eq!(byte_level_bytes("Ġ"), Some(vec![0x20]));
        assert_eq!(byte_level_bytes("Ċ"), Some(vec![0x0a]));
        assert_eq!(byte_level_bytes("Ń"), Some(vec![0xad]));
        assert_eq!(byte_level_bytes("aÃ"), Some(vec![b'a', 0xc3]));
        assert_eq!(byte_level_bytes("€"), None);
    }

    #[test]
    fn control_characters_in_tokens_are_made_visible() {
        assert_eq!(visible("a\tb\nc"), "a\tb\nc");
        assert_eq!(visible("\u{1b}[31mred"), "\\x1b[31mred");
        assert_eq!(visible("x\u{202e}y\r"), "x\\u{202e}y\\x0d");
    }
}
