//! The loss-mask viewer as HTML: a `<section class="sphm">` fragment with its own
//! `sphm-` prefixed classes ([`MASK_CSS`]), and a whole offline page around it. No
//! script: messages collapse with `<details>`; every text and attribute is escaped with
//! the `html-escape` crate.
//!
//! Markup a reader (or a browser test) can rely on: every position is one
//! `<span class="sphm-t ...">` inside a `.sphm-tokens` block, with `data-pos`,
//! `data-mask` and `data-exposure`; `sphm-sup` is on exactly the positions whose mask
//! value is 1; each message span is one `<details class="sphm-msg">` with `data-role`,
//! `data-msg` and `data-kept`; the first offending position of a failed contract check has
//! class `sphm-bad` and the id `<section id>-first-offending`.

use super::{Decoding, MaskOptions, MaskView, Piece, Position, load, shown};
use anyhow::Result;
use duckdb::Connection;
use html_escape::{encode_double_quoted_attribute as attr, encode_text as text};
use std::fmt::Write as _;

/// The style of [`mask_view_html`]'s fragment: every selector starts with `.sphm`, so it
/// can sit in a page beside other styles.
pub const MASK_CSS: &str = r#".sphm{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1b1b;margin:1em 0}
.sphm h2{font-size:1.15em;margin:.2em 0}
.sphm code{font-family:ui-monospace,Menlo,Consolas,monospace}
.sphm-meta,.sphm-stamp,.sphm-decoding{font-size:13px;color:#444;margin:.2em 0}
.sphm-legend{list-style:none;padding:0;margin:.4em 0;font-size:13px;display:flex;flex-wrap:wrap;gap:.4em 1.2em}
.sphm-key{font-family:ui-monospace,Menlo,Consolas,monospace;padding:0 .3em;border:1px solid #ccc}
.sphm-tokens{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;white-space:pre-wrap;overflow-wrap:anywhere;line-height:1.7;padding:2px 6px}
.sphm-t{border-right:1px solid rgba(0,0,0,.1)}
.sphm-sup,.sphm-key-sup{background:#b7e4c7;color:#081c15}
.sphm-sup.sphm-x2,.sphm-key-x2{background:#74c69d;color:#081c15}
.sphm-sup.sphm-x3,.sphm-key-x3{background:#2d6a4f;color:#fff}
.sphm-odd,.sphm-key-odd{background:#ffd166}
.sphm-nomask,.sphm-noid,.sphm-key-nomask{background:repeating-linear-gradient(45deg,#eee,#eee 3px,#d6d6d6 3px,#d6d6d6 6px);color:#555}
.sphm-rec,.sphm-key-rec{text-decoration:underline wavy #7b2cbf;text-underline-offset:4px}
.sphm-bytes,.sphm-key-bytes{font-style:italic;color:#9d0208}
.sphm-id{margin-right:.6ch}
.sphm-bad,.sphm-key-bad{outline:2px solid #d00000;outline-offset:1px;font-weight:bold}
.sphm-msg{border-left:4px solid #bbb;margin:4px 0;padding-left:6px}
.sphm-msg.sphm-kept{border-left-color:#2d6a4f}
.sphm-msg.sphm-notkept{border-left-color:#e85d04}
.sphm-msg>summary{cursor:pointer;font-size:13px;color:#333}
.sphm-ok{color:#2d6a4f;font-size:13px}
.sphm-failures{border:1px solid #d00000;background:#fff0f3;padding:4px 10px;font-size:13px;margin:.4em 0}
.sphm-failures ul{margin:.2em 0;padding-left:1.2em}
"#;

/// The loss-mask viewer of view `view_id` as an HTML fragment: one `<section>` with a
/// legend, the view's facts and stamps, its contract failures (the first offending
/// position highlighted and linked), and one collapsible `<details>` per message span.
/// Style it with [`MASK_CSS`].
///
/// Errors: as [`load`] (an unknown view id, a tokenizer that is missing or not the view's).
pub fn mask_view_html(conn: &Connection, view_id: &str, opts: &MaskOptions) -> Result<String> {
    Ok(fragment(&load(conn, view_id, opts)?))
}

/// A whole self-contained HTML page (no script, no external resource) around
/// [`mask_view_html`]'s fragment.
///
/// Errors: as [`load`].
pub fn mask_view_page(conn: &Connection, view_id: &str, opts: &MaskOptions) -> Result<String> {
    let view = load(conn, view_id, opts)?;
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" \
         content=\"width=device-width, initial-scale=1\">\n<title>loss mask of view {}</title>\n<style>\n\
         body{{margin:1em 2em;background:#fff}}\n{MASK_CSS}</style>\n</head>\n<body>\n{}<footer class=\"sphm-meta\">\
         made by sphragis {}</footer>\n</body>\n</html>\n",
        text(&view.view_id),
        fragment(&view),
        text(crate::VERSION_TEXT)
    ))
}

/// The `id` of a view's section: `sphm-` and 16 hex digits of the SHA-256 of its
/// view_id (unique per view in a page that shows several).
pub fn section_id(view_id: &str) -> String {
    format!("sphm-{}", &crate::hash::sha256_hex(view_id.as_bytes())[..16])
}

/// Renders a loaded view as the fragment [`mask_view_html`] returns.
pub fn fragment(view: &MaskView) -> String {
    let id = section_id(&view.view_id);
    let first = view.first_offending();
    let mut h = String::new();
    let _ = write!(
        h,
        "<section class=\"sphm\" id=\"{id}\" data-view-id=\"{}\">\n<h2>Loss mask of view <code>{}</code></h2>\n",
        attr(&view.view_id),
        text(&view.view_id)
    );
    let _ = writeln!(
        h,
        "<p class=\"sphm-meta\">pool <code>{}</code> · instance <code>{}</code> · {} token ids, {} mask values (from {}) \
         · <b>{} supervised</b> (mask 1) · {} message spans</p>",
        text(&view.pool),
        text(&view.instance_id),
        view.n_ids,
        view.n_mask,
        text(&view.mask_source),
        view.supervised,
        view.spans.len()
    );
    let decoding = match &view.decoding {
        Decoding::Tokenizer { path, sha256, recorded: true } => {
            format!("decoded one position at a time with {} (sha256 {}, the tokenizer the view records)", path, sha256)
        }
        Decoding::Tokenizer { path, sha256, recorded: false } => format!(
            "decoded one position at a time with {} (sha256 {}, as given: the view records no tokenizer)",
            path, sha256
        ),
        Decoding::Ids { reason } => reason.clone(),
    };
    let _ = writeln!(h, "<p class=\"sphm-decoding\">{}</p>", text(&decoding));
    let stamps: Vec<String> = view.stamps.iter().map(|s| format!("<code>{}</code>", text(s))).collect();
    let _ = writeln!(h, "<p class=\"sphm-stamp\">rows from {}</p>", stamps.join("; "));
    legend(&mut h, view);
    if view.failures.is_empty() {
        h.push_str("<p class=\"sphm-ok\">passes every contract check</p>\n");
    } else {
        let _ = write!(h, "<div class=\"sphm-failures\"><p>fails {} contract check(s)", view.failures.len());
        if let Some(f) = first {
            let _ = write!(
                h,
                "; first offending position <a href=\"#{id}-first-offending\">{}</a> ({})",
                f.token_position.unwrap_or_default(),
                text(&f.check_name)
            );
        }
        h.push_str(":</p><ul>\n");
        for f in &view.failures {
            let at = f.token_position.map_or(String::new(), |p| format!(" at position {p}"));
            let _ = writeln!(h, "<li><code>{}</code>{}: {}</li>", text(&f.check_name), at, text(&f.detail));
        }
        h.push_str("</ul></div>\n");
    }
    let first_position = first.and_then(|f| f.token_position);
    for (span, from, to) in view.groups() {
        let positions = &view.positions[from..to];
        let (lo, hi) = (positions[0].position, positions[positions.len() - 1].position);
        let supervised = positions.iter().filter(|p| p.supervised()).count();
        let s = span.and_then(|o| view.span(o));
        let (class, data, title) = match s {
            Some(s) => {
                let kept = match s.kept {
                    Some(true) => ("sphm-kept", "kept", " · kept for loss"),
                    Some(false) => ("sphm-notkept", "masked", " · not kept (masked)"),
                    None => ("", "", ""),
                };
                (
                    format!("sphm-msg {}", kept.0),
                    format!(
                        " data-role=\"{}\" data-msg=\"{}\" data-kept=\"{}\"",
                        attr(&s.message.role),
                        s.message.msg_index,
                        kept.1
                    ),
                    format!("message {} · {}{}", s.message.msg_index, s.message.role, kept.2),
                )
            }
            None => ("sphm-msg sphm-outside".into(), " data-role=\"\"".into(), "outside every message span".into()),
        };
        let _ = writeln!(
            h,
            "<details class=\"{}\"{data} open><summary>{} · {} · {supervised} supervised</summary>",
            class.trim_end(),
            text(&title),
            super::positions_label(lo, hi)
        );
        h.push_str("<div class=\"sphm-tokens\">");
        for p in positions {
            token(
                &mut h,
                &id,
                p,
                first_position == Some(p.position),
                view.failures.iter().any(|f| f.token_position == Some(p.position)),
            );
        }
        h.push_str("</div>\n</details>\n");
    }
    h.push_str("</section>\n");
    h
}

fn legend(h: &mut String, view: &MaskView) {
    h.push_str("<ul class=\"sphm-legend\">\n");
    let mut keys = vec![
        ("sphm-key-sup", "supervised (mask 1)"),
        ("", "not supervised (mask 0)"),
        ("sphm-key-x2", "supervised, exposure 2"),
        ("sphm-key-x3", "supervised, exposure 3 or more"),
    ];
    if view.recovery_known() {
        keys.push(("sphm-key-rec", "recovery region"));
    }
    keys.extend([
        ("sphm-key-bad", "first offending position"),
        ("sphm-key-bytes", "bytes: not UTF-8 on their own"),
        ("sphm-key-odd", "mask value not 0/1"),
        ("sphm-key-nomask", "past the end of the mask or ids"),
    ]);
    for (class, what) in keys {
        let _ = writeln!(
            h,
            "<li><span class=\"{}\">abc</span> {}</li>",
            format!("sphm-key {class}").trim_end(),
            text(what)
        );
    }
    h.push_str("<li>left bar: green = assistant message kept for loss, orange = not kept</li>\n</ul>\n");
}

fn token(h: &mut String, section: &str, p: &Position, first: bool, offending: bool) {
    let mut class = String::from("sphm-t");
    match p.mask {
        Some(1) => {
            class.push_str(" sphm-sup");
            match p.exposure {
                2 => class.push_str(" sphm-x2"),
                n if n >= 3 => class.push_str(" sphm-x3"),
                _ => {}
            }
        }
        Some(0) => {}
        Some(_) => class.push_str(" sphm-odd"),
        None => class.push_str(" sphm-nomask"),
    }
    match p.piece {
        Piece::Bytes(_) => class.push_str(" sphm-bytes"),
        Piece::Id(_) => class.push_str(" sphm-id"),
        Piece::Missing => class.push_str(" sphm-noid"),
        Piece::Text(_) => {}
    }
    if p.recovery == Some(true) {
        class.push_str(" sphm-rec");
    }
    if offending {
        class.push_str(" sphm-bad");
    }
    let mut title = format!("position {}", p.position);
    if let Some(id) = p.token_id {
        let _ = write!(title, " · id {id}");
    }
    match p.mask {
        Some(m) => {
            let _ = write!(title, " · mask {m}");
        }
        None => title.push_str(" · no mask value"),
    }
    let _ = write!(title, " · exposure {}", p.exposure);
    if p.recovery == Some(true) {
        title.push_str(" · recovery region");
    }
    if matches!(p.piece, Piece::Bytes(_)) {
        title.push_str(" · bytes not valid UTF-8 on their own");
    }
    if offending {
        title.push_str(" · offending position of a failed contract check");
    }
    let anchor = if first { format!(" id=\"{section}-first-offending\"") } else { String::new() };
    let _ = write!(
        h,
        "<span class=\"{class}\"{anchor} data-pos=\"{}\" data-mask=\"{}\" data-exposure=\"{}\" title=\"{}\">{}</span>",
        p.position,
        p.mask.map_or(String::new(), |m| m.to_string()),
        p.exposure,
        attr(&title),
        text(&shown(&p.piece))
    );
}
