//! The loss-mask viewer on a terminal: ANSI colours (SGR codes), or plain text with the
//! supervised runs bracketed when colours are off (not a terminal, `NO_COLOR`).
//!
//! ANSI: each supervised position is written as one `ESC[...42m` (green background)
//! sequence, its text and `ESC[0m`; nothing else uses the green background. A newline
//! inside a token is shown as `↵` in its colour and the line break written after the
//! reset, so colours never bleed into the next line.

use super::{Decoding, MaskView, Piece, Position, shown};
use std::fmt::Write as _;

/// SGR parameters of a supervised position (black on green).
pub const SUPERVISED: &str = "30;42";
/// Added for a supervised position seen by 2 or more training views (bold).
pub const EXPOSED: &str = "1";
/// Added for a position in the recovery region (underline).
pub const RECOVERY: &str = "4";
/// An offending position of a failed contract check (white on red).
pub const OFFENDING: &str = "97;41";
/// A mask value other than 0 and 1 (black on yellow).
pub const ODD_MASK: &str = "30;43";
/// Byte pieces and positions past the ids or mask (magenta text).
pub const UNUSUAL: &str = "35";
/// Message headers (faint).
const HEADER: &str = "2";

/// Marks around a run of supervised positions in plain text.
pub const PLAIN_OPEN: &str = "⟦";
/// See [`PLAIN_OPEN`].
pub const PLAIN_CLOSE: &str = "⟧";

fn sgr(params: &str) -> String {
    format!("\x1b[{params}m")
}

/// Renders a view for a terminal: with `colour`, ANSI SGR codes (see the module docs);
/// without, plain text where each run of supervised positions is wrapped in `⟦ ⟧` and an
/// offending position in `⟪! !⟫`. Lines: the view's facts, the stamps, a legend, the
/// contract verdict, then per message span a header line `── message I · role · kept ·
/// tokens A–B · N supervised ──` and its tokens. Token ids are separated by spaces.
pub fn render(view: &MaskView, colour: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "view {} · pool {} · instance {} · {} token ids, {} mask values (from {}) · {} supervised (mask 1) · {} message spans",
        view.view_id,
        view.pool,
        view.instance_id,
        view.n_ids,
        view.n_mask,
        view.mask_source,
        view.supervised,
        view.spans.len()
    );
    let _ = writeln!(
        out,
        "{}",
        match &view.decoding {
            Decoding::Tokenizer { path, sha256, recorded: true } =>
                format!("decoded per position with {path} (sha256 {sha256}, recorded by the view)"),
            Decoding::Tokenizer { path, sha256, recorded: false } =>
                format!("decoded per position with {path} (sha256 {sha256}, as given: the view records no tokenizer)"),
            Decoding::Ids { reason } => reason.clone(),
        }
    );
    for s in &view.stamps {
        let _ = writeln!(out, "rows from {s}");
    }
    if colour {
        let mut legend = format!(
            "legend: {}supervised{} · not supervised · {}supervised, exposure ≥ 2{}",
            sgr(SUPERVISED),
            sgr("0"),
            sgr(&format!("{EXPOSED};{SUPERVISED}")),
            sgr("0")
        );
        if view.recovery_known() {
            let _ = write!(legend, " · {}recovery region{}", sgr(RECOVERY), sgr("0"));
        }
        let _ = write!(
            legend,
            " · {}offending position{} · {}mask not 0/1{} · {}bytes / past the end{}",
            sgr(OFFENDING),
            sgr("0"),
            sgr(ODD_MASK),
            sgr("0"),
            sgr(UNUSUAL),
            sgr("0")
        );
        let _ = writeln!(out, "{legend}");
    } else {
        let _ = writeln!(
            out,
            "legend: {PLAIN_OPEN}supervised run{PLAIN_CLOSE} · ⟪!offending position!⟫ (no colours: not a terminal, or NO_COLOR is set; --format ansi forces them)"
        );
    }
    let first = view.first_offending();
    match first {
        None if view.failures.is_empty() => out.push_str("contract: passes every check\n"),
        _ => {
            let _ = writeln!(out, "contract: fails {} check(s)", view.failures.len());
            for f in &view.failures {
                let at = f.token_position.map_or(String::new(), |p| format!(" at position {p}"));
                let _ = writeln!(out, "  {}{at}: {}", f.check_name, f.detail);
            }
            if let Some(f) = first {
                let _ = writeln!(
                    out,
                    "first offending position: {} ({})",
                    f.token_position.unwrap_or_default(),
                    f.check_name
                );
            }
        }
    }
    let offending: Vec<i64> = view.failures.iter().filter_map(|f| f.token_position).collect();
    let ids = matches!(view.decoding, Decoding::Ids { .. });
    for (span, from, to) in view.groups() {
        let positions = &view.positions[from..to];
        let (lo, hi) = (positions[0].position, positions[positions.len() - 1].position);
        let supervised = positions.iter().filter(|p| p.supervised()).count();
        let title = match span.and_then(|o| view.span(o)) {
            Some(s) => format!(
                "message {} · {}{}",
                s.message.msg_index,
                s.message.role,
                match s.kept {
                    Some(true) => " · kept",
                    Some(false) => " · not kept (masked)",
                    None => "",
                }
            ),
            None => "outside every message span".to_string(),
        };
        let header = format!("── {title} · {} · {supervised} supervised ──", super::positions_label(lo, hi));
        if colour {
            let _ = writeln!(out, "\n{}{header}{}", sgr(HEADER), sgr("0"));
        } else {
            let _ = writeln!(out, "\n{header}");
        }
        let mut in_run = false;
        for (i, p) in positions.iter().enumerate() {
            let bad = offending.contains(&p.position);
            let piece = shown(&p.piece);
            if colour {
                token_ansi(&mut out, p, &piece, bad);
            } else {
                if p.supervised() && !in_run {
                    out.push_str(PLAIN_OPEN);
                } else if !p.supervised() && in_run {
                    out.push_str(PLAIN_CLOSE);
                }
                in_run = p.supervised();
                if bad {
                    let _ = write!(out, "⟪!{piece}!⟫");
                } else {
                    out.push_str(&piece);
                }
            }
            if ids && i + 1 < positions.len() {
                out.push(' ');
            }
        }
        if in_run {
            out.push_str(PLAIN_CLOSE);
        }
        out.push('\n');
    }
    out
}

/// One position in ANSI: its style, its text with newlines shown as `↵`, the reset, then
/// the line breaks the text held.
fn token_ansi(out: &mut String, p: &Position, piece: &str, bad: bool) {
    let mut params: Vec<&str> = Vec::new();
    if bad {
        params.push(OFFENDING);
    } else {
        match p.mask {
            Some(1) => {
                if p.exposure >= 2 {
                    params.push(EXPOSED);
                }
                params.push(SUPERVISED);
            }
            Some(0) => {}
            Some(_) => params.push(ODD_MASK),
            None => params.push(UNUSUAL),
        }
        if matches!(p.piece, Piece::Bytes(_) | Piece::Missing) && p.mask != Some(1) {
            params.push(UNUSUAL);
        }
    }
    if p.recovery == Some(true) {
        params.push(RECOVERY);
    }
    let breaks = piece.matches('\n').count();
    if params.is_empty() {
        out.push_str(piece);
        return;
    }
    let _ = write!(out, "{}{}{}", sgr(&params.join(";")), piece.replace('\n', "↵"), sgr("0"));
    out.extend(std::iter::repeat_n('\n', breaks));
}
