#!/usr/bin/env python3
"""Browser test of the loss-mask viewer (issue 13): `sphragis show view --format html`
opened from disk in headless Chromium with the network disabled.

Usage:
    python tests/browser/mask_browser.py SPHRAGIS_BIN DB VIEW_ID OUT_DIR [--tokenizer FILE]

It writes OUT_DIR/mask-view.html with `show view`, and OUT_DIR/mask-view.json, a sidecar
holding the view's supervised positions computed by `sphragis sql` straight from
sft_views.loss_mask (not from the viewer). Then, in Chromium (Playwright for Python,
executable /usr/bin/chromium, every non-file request aborted):
  - the elements coloured as supervised (`.sphm-tokens .sphm-sup`) are exactly the
    sidecar's positions, and their computed background differs from an unsupervised
    token's (the colour is really painted);
  - there is one element per position, and one collapsible <details> per message span;
  - clicking a message's summary hides its tokens, clicking again shows them;
  - no request left the page's own file;
and it saves OUT_DIR/mask-viewer.png (the viewport). Exit status 0 when every check
holds; otherwise 1, with the failed checks on stderr.

Needs: `pip install playwright` (no browser download: the Debian package `chromium`).
"""

import json
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright


def sql_literal(text):
    return "'" + text.replace("'", "''") + "'"


def sphragis(binary, db, *args):
    out = subprocess.run([binary, "--db", db, "--quiet", *args], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"sphragis {' '.join(args)} failed ({out.returncode}): {out.stderr}")
    return out.stdout


def main(argv):
    if len(argv) not in (5, 7) or (len(argv) == 7 and argv[5] != "--tokenizer"):
        sys.exit(__doc__)
    binary, db, view_id, out_dir = argv[1:5]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    page_path = out / "mask-view.html"
    show = ["show", "view", view_id, "--format", "html", "--out", str(page_path)]
    if len(argv) == 7:
        show += ["--tokenizer", argv[6]]
    sphragis(binary, db, *show)

    # the sidecar: the mask as loaded, independent of the viewer
    query = (
        "select n_ids, n_mask, to_json(list_filter(range(len(loss_mask)), lambda i: loss_mask[i + 1] = 1))::varchar "
        f"as supervised, (select count(*) from sft_view_spans where view_id = {sql_literal(view_id)}) as spans "
        f"from sft_views where view_id = {sql_literal(view_id)}"
    )
    rows = json.loads(sphragis(binary, db, "sql", query, "--format", "json"))["rows"]
    if len(rows) != 1:
        sys.exit(f"no view {view_id} in {db}")
    sidecar = {
        "view_id": view_id,
        "positions": max(rows[0]["n_ids"], rows[0]["n_mask"]),
        "supervised": json.loads(rows[0]["supervised"]),
        "spans": rows[0]["spans"],
    }
    (out / "mask-view.json").write_text(json.dumps(sidecar, indent=1) + "\n")

    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    outside = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        context = browser.new_context(offline=True, viewport={"width": 1100, "height": 760})

        def route(r):
            if r.request.url.startswith("file://"):
                r.continue_()
            else:
                outside.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        page.goto(page_path.resolve().as_uri())

        tokens = page.locator(".sphm-tokens .sphm-t")
        check(tokens.count() == sidecar["positions"], f"{tokens.count()} token elements, {sidecar['positions']} positions")
        coloured = page.locator(".sphm-tokens .sphm-sup")
        positions = [int(x) for x in coloured.evaluate_all("els => els.map(e => e.dataset.pos)")]
        check(
            positions == sidecar["supervised"],
            f"{len(positions)} supervised-coloured tokens, {len(sidecar['supervised'])} mask-1 positions, same positions",
        )
        backgrounds = page.evaluate(
            """() => {
                const bg = e => e ? getComputedStyle(e).backgroundColor : null;
                return [bg(document.querySelector('.sphm-tokens .sphm-sup')),
                        bg(document.querySelector('.sphm-tokens .sphm-t:not(.sphm-sup)'))];
            }"""
        )
        check(
            backgrounds[0] not in (None, "rgba(0, 0, 0, 0)") and backgrounds[0] != backgrounds[1],
            f"supervised background {backgrounds[0]} differs from unsupervised {backgrounds[1]}",
        )
        messages = page.locator("details.sphm-msg")
        check(messages.count() >= sidecar["spans"], f"{messages.count()} message sections for {sidecar['spans']} spans")

        # collapsing: the first message section, by a click on its summary
        first = messages.first
        body = first.locator(".sphm-tokens")
        before = body.is_visible()
        first.locator("summary").click()
        collapsed = not body.is_visible() and not first.evaluate("d => d.open")
        first.locator("summary").click()
        check(before and collapsed and body.is_visible(), "a message collapses and expands on its summary")

        # the screenshot: every message before the first kept assistant message collapsed
        # (by clicks), so the legend and a coloured assistant turn are in view
        for i in range(messages.count()):
            section = messages.nth(i)
            if section.get_attribute("data-kept") == "kept":
                break
            section.locator("summary").click()
        page.screenshot(path=str(out / "mask-viewer.png"))

        bad = page.locator(".sphm-bad")
        if bad.count():
            anchor = page.locator(".sphm-failures a").first
            anchor.click()
            check(bad.first.is_visible(), "the first offending position is highlighted and its link reaches it")
        browser.close()
    check(not outside, f"no request outside the file ({outside[:3]})")
    if failures:
        print(f"{len(failures)} checks failed", file=sys.stderr)
        return 1
    print(f"mask viewer: {len(positions)} supervised tokens of {view_id} coloured; screenshot {out / 'mask-viewer.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
