"""Browser test of the HTML report (issue 13): headless Chromium, offline.

Usage: python tests/browser/report_browser.py REPORT.html SCREENSHOT_DIR

Opens the report from disk in Playwright's Chromium driver (the Debian package
/usr/bin/chromium, never a downloaded browser) in a context with the network switched off
and every non-file request aborted, then checks that
  - the page loaded no resource from the network (every request it made was a file: URL);
  - every chart is an SVG of non-zero size with marks (rectangles beyond the background,
    or lines / circles) that have a non-zero size on screen;
  - clicking a drill-down link scrolls its target into view, and the target lists ids;
  - every drill-down link targets one group that lists ids, and the first link of each
    kind of count (split sizes, fence disagreements, dedup, ...) scrolls to its group;
and writes screenshots into SCREENSHOT_DIR: the top of the page, the first chart, the first
section with a chart (stamp, chart, table), and the drill-down target. Exits non-zero with a message on the first failure; prints
"N passed, 0 failed" at the end.
"""

import os
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = os.environ.get("SPHRAGIS_CHROMIUM", "/usr/bin/chromium")


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    report = Path(sys.argv[1]).resolve()
    shots = Path(sys.argv[2])
    shots.mkdir(parents=True, exist_ok=True)
    if not report.is_file():
        print(f"{report}: no such file", file=sys.stderr)
        return 2
    passed = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        context = browser.new_context(offline=True, viewport={"width": 1400, "height": 900})
        requests = []

        def route(r):
            requests.append(r.request.url)
            if r.request.url.startswith("file:"):
                r.continue_()
            else:
                r.abort()

        context.route("**/*", route)
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(report.as_uri())
        page.wait_for_load_state("load")

        outside = [u for u in requests if not u.startswith("file:")]
        assert not outside, f"the report asked the network for {outside}"
        assert not errors, f"script errors: {errors}"
        passed += 1

        charts = page.locator("figure.chart svg")
        n = charts.count()
        assert n > 0, "no chart in the report"
        for i in range(n):
            svg = charts.nth(i)
            box = svg.bounding_box()
            assert box and box["width"] > 0 and box["height"] > 0, f"chart {i} has no size: {box}"
            # marks: shapes with a size on screen, beyond the white background rectangle
            marks = svg.evaluate(
                """s => Array.from(s.querySelectorAll('rect, polyline, path, circle, line')).slice(1)
                       .filter(e => { const b = e.getBBox(); return b.width > 0 || b.height > 0; }).length"""
            )
            assert marks > 0, f"chart {i} draws no mark"
        passed += 1

        page.screenshot(path=str(shots / "report-top.png"))
        charts.first.scroll_into_view_if_needed()
        charts.first.screenshot(path=str(shots / "report-chart.png"))
        # the first section with a chart: title, stamp, chart, table (docs/report-screenshot.png)
        section = page.locator("section.report", has=page.locator("figure.chart")).first
        section.scroll_into_view_if_needed()
        section.screenshot(path=str(shots / "report-section.png"))

        link = page.locator("a.drill").first
        assert link.count() == 1, "no drill-down link"
        target_id = link.get_attribute("href")[1:]
        link.click()
        page.wait_for_timeout(300)
        target = page.locator(f"[id='{target_id}']")
        # a link scrolls its target to the top of the viewport; fractional layout leaves
        # its top up to a pixel above 0 (seen: -0.48), which is still in view
        in_view = target.evaluate(
            """e => { const b = e.getBoundingClientRect();
                      return b.top > -1 && b.top < window.innerHeight; }"""
        )
        assert in_view, f"#{target_id} is not in view after the click"
        assert page.evaluate("location.hash") == f"#{target_id}"
        assert target.locator("ul.ids li").count() > 0, f"#{target_id} lists no ids"
        passed += 1
        page.screenshot(path=str(shots / "report-drilldown.png"))

        # every drill-down link targets a group of ids; the first link of each kind of
        # count (the group's data-link, e.g. split_counts_v1.examples) scrolls to it
        targets = page.eval_on_selector_all("a.drill", "as => as.map(a => a.getAttribute('href').slice(1))")
        kinds = {}
        for i, t in enumerate(targets):
            group = page.locator(f"[id='{t}']")
            assert group.count() == 1, f"#{t} resolves to {group.count()} elements"
            assert group.locator("ul.ids li").count() > 0, f"#{t} lists no ids"
            kinds.setdefault(group.get_attribute("data-link"), i)
        for kind, i in kinds.items():
            page.locator("a.drill").nth(i).click()
            page.wait_for_timeout(100)
            t = targets[i]
            assert page.evaluate("location.hash") == f"#{t}", f"{kind}: the link did not go to #{t}"
            top = page.locator(f"[id='{t}']").evaluate("e => e.getBoundingClientRect().top")
            assert -1 < top < page.viewport_size["height"], f"{kind}: #{t} is not in view after the click"
        passed += 1
        browser.close()
    print(f"{passed} passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
