"""HTML report benchmark: the size of a page and the time it takes to become interactive.

An MS MARCO shaped evaluation — ``N`` queries, about one relevant document each, a run ``--depth``
documents deep, scored at ef's default cutoffs — is written as an evaluation page with its run
and qrels (the drill-down and the precision-recall curve included, no corpus) at 300, 7,000
(MS MARCO's 6,980 rounded) and 50,000 queries, and as a comparison page of two such systems.
Each page is opened from disk in headless Chromium (Debian's ``chromium`` through selenium, the
network cut, as the tests do) ``--repeats`` times; the time is the page's own
``performance.now()`` when every chart is drawn and the table is built, i.e. milliseconds since
navigation started (the median is shown).

``--libraries`` measures the choice of charting library: one chart of ``N`` bars (the per-query
difference chart) drawn by Vega-Lite (vl-convert's offline bundle, the library the pages use)
and by Plotly (``plotly.offline.get_plotlyjs()``), each inlined into one file.

    python benchmarks/bench_html.py                      # 300, 7,000, 50,000 queries
    python benchmarks/bench_html.py --sizes 7000 --libraries
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ef.evaluation import compare, evaluate_run

_FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1600",
)


def workload(n_queries: int, depth: int, seed: int) -> tuple[dict, dict]:
    """Qrels with 1–2 relevant documents per query, and a ranked run ``depth`` deep."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, float]] = {}
    run: dict[str, list[str]] = {}
    for q in range(n_queries):
        query = str(1_000_000 + q)
        relevant = [str(rng.randrange(8_800_000)) for _ in range(1 + (rng.random() < 0.07))]
        qrels[query] = dict.fromkeys(relevant, 1.0)
        ranked = [str(rng.randrange(8_800_000)) for _ in range(depth)]
        for doc in relevant:
            if rng.random() < 0.8:  # found 4 times in 5, mostly near the top
                ranked[min(int(rng.expovariate(0.15)), depth - 1)] = doc
        run[query] = ranked
    return qrels, run


@contextmanager
def chromium() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "1"
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in _FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory() as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            driver.execute_cdp_cmd("Network.enable", {})
            driver.execute_cdp_cmd(
                "Network.emulateNetworkConditions",
                {"offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0},
            )
            yield driver
        finally:
            driver.quit()


def render_ms(driver: object, page: Path, repeats: int) -> float:
    """The median of ``repeats`` loads: ms from navigation to the page's ready mark."""
    times = []
    for _ in range(repeats):
        driver.get("about:blank")  # type: ignore[attr-defined]
        driver.get(page.as_uri())  # type: ignore[attr-defined]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            ready = driver.execute_script(  # type: ignore[attr-defined]
                "return document.body && document.body.dataset.readyMs"
            )
            if ready:
                times.append(float(ready))
                break
            time.sleep(0.02)
        else:
            raise TimeoutError(f"{page} never became ready")
    return statistics.median(times)


def pages(n_queries: int, depth: int, folder: Path) -> list[tuple[str, Path, float]]:
    qrels, run_a = workload(n_queries, depth, seed=1)
    _, run_b = workload(n_queries, depth, seed=2)
    a, b = evaluate_run(run_a, qrels), evaluate_run(run_b, qrels)
    written = []
    started = time.perf_counter()
    path = a.to_html(folder / f"evaluation-{n_queries}.html", run=run_a, qrels=qrels)
    written.append(("evaluation", path, time.perf_counter() - started))
    comparison = compare({"a": a, "b": b}, baseline="a", tests=("t-test",))
    started = time.perf_counter()
    path = comparison.to_html(
        folder / f"comparison-{n_queries}.html",
        reports={"a": a, "b": b},
        runs={"a": run_a, "b": run_b},
        qrels=qrels,
    )
    written.append(("comparison", path, time.perf_counter() - started))
    return written


_VEGA_PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<div id="chart" style="width:1100px"></div>
<script type="module">{bundle}</script>
<script type="module">
window.vegaEmbed("#chart", {spec}, {{renderer: "svg", actions: false}}).then(() => {{
  document.body.dataset.readyMs = String(Math.round(performance.now())); }});
</script></body></html>"""

_PLOTLY_PAGE = """<!doctype html><html><head><meta charset="utf-8"></head><body>
<div id="chart" style="width:1100px;height:260px"></div>
<script>{bundle}</script>
<script>
const rows = {rows};
Plotly.newPlot("chart", [{{type: "bar", x: rows.map(r => r.query),
  y: rows.map(r => r.difference)}}], {{xaxis: {{showticklabels: false, type: "category"}}}},
  {{displayModeBar: false}}).then(() => {{
  document.body.dataset.readyMs = String(Math.round(performance.now())); }});
</script></body></html>"""


def libraries(n_bars: int, folder: Path) -> list[tuple[str, Path]]:
    """The same N-bar chart drawn by Vega-Lite and by Plotly, each inlined into one file."""
    import plotly.offline

    from ef.evaluation._html.charts import difference_bars
    from ef.evaluation._html.render import page_json, vega_bundle

    rng = random.Random(3)
    rows = sorted(
        ({"query": str(q), "difference": rng.uniform(-1, 1)} for q in range(n_bars)),
        key=lambda row: -row["difference"],
    )
    vega = folder / f"vega-{n_bars}.html"
    spec = difference_bars("difference", rows) | {"width": 1100}
    vega.write_text(_VEGA_PAGE.format(bundle=vega_bundle(), spec=page_json(spec)), "utf-8")
    plotly_page = folder / f"plotly-{n_bars}.html"
    text = _PLOTLY_PAGE.format(bundle=plotly.offline.get_plotlyjs(), rows=json.dumps(rows))
    plotly_page.write_text(text, "utf-8")
    return [("Vega-Lite", vega), ("Plotly", plotly_page)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="300,7000,50000", help="query counts, comma-separated")
    parser.add_argument("--depth", type=int, default=100, help="documents per ranking")
    parser.add_argument("--repeats", type=int, default=5, help="loads per page (median shown)")
    parser.add_argument("--libraries", action="store_true", help="Vega-Lite beside Plotly")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    from ef.evaluation._html.render import vega_bundle

    started = time.perf_counter()
    vega_bundle()  # built once per process, then reused by every page
    print(f"Vega bundle from vl-convert: {time.perf_counter() - started:.2f} s (once per process)")
    with tempfile.TemporaryDirectory() as tmp, chromium() as driver:
        folder = Path(tmp)
        # A first page warms the browser up (its first load compiles more than the next ones).
        render_ms(driver, pages(50, args.depth, folder)[0][1], 1)
        print("| page | queries | size (MB) | write (s) | interactive (ms, median) |")
        print("|---|---:|---:|---:|---:|")
        for n_queries in sizes:
            for kind, path, seconds in pages(n_queries, args.depth, folder):
                size = path.stat().st_size / 1e6
                ms = render_ms(driver, path, args.repeats)
                print(f"| {kind} | {n_queries:,} | {size:.2f} | {seconds:.2f} | {ms:.0f} |")
        if args.libraries:
            print()
            print("| library | bars | size (MB) | rendered (ms, median) |")
            print("|---|---:|---:|---:|")
            for n_bars in sizes:
                for name, path in libraries(n_bars, folder):
                    size = path.stat().st_size / 1e6
                    ms = render_ms(driver, path, args.repeats)
                    print(f"| {name} | {n_bars:,} | {size:.2f} | {ms:.0f} |")


if __name__ == "__main__":
    main()
