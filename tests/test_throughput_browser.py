"""The throughput chart of the compare tab in a real headless Chromium (the machinery of
``test_web_browser``): choosing a model draws, beside the ranking, the estimated curves of the
fastest GPUs (a P50 line in a P10-P90 band each), the catalog's measured options (a dashed
level where the row measured no per-user speed) and the server's own serving row (a dot at its
per-user speed), as ``GET /v1/throughput`` answers them, with a legend, axis titles in units
and a title and description; at 375 px it fits the screen. Checked on the DOM, not pixels."""

from __future__ import annotations

import csv

from tests.test_compare_browser import _choose
from tests.test_web_browser import Page, Server

MODEL = "llama-3.1-8b"
H100 = "h100-sxm5-80gb"
#: The server's own serving row: 1 H100 at 1000/1000 tokens, 40 tokens/s per user.
ROW = {"model": MODEL, "precision": "fp16", "gpu": H100, "gpus_per_replica": "1",
       "framework": "vLLM", "input_tokens": "1000", "output_tokens": "1000", "concurrency": "32",
       "tokens_per_s_per_gpu": "2400", "tokens_per_s_per_user": "40", "as_of": "2026-11-01",
       "source": "our lab"}  # fmt: skip


def _drawn(page: Page) -> dict:
    return page.js(
        """const box = document.getElementById('compare-throughput');
        const svg = box.querySelector('svg');
        const each = (sel, f) => [...svg.querySelectorAll(sel)].map(f);
        return {
          shown: !box.hidden,
          title: svg.querySelector(':scope > title').textContent,
          desc: svg.querySelector(':scope > desc').textContent,
          label: svg.getAttribute('aria-label'),
          axes: each('.axis-title', (n) => n.textContent),
          curves: each('g.throughput.estimated', (g) => [
            g.querySelector('title').textContent,
            g.querySelector('polyline.tp-line').getAttribute('points').split(' ').length,
            g.querySelector('polygon.tp-band').getAttribute('points').split(' ').length]),
          dots: each('g.throughput.yours circle.tp-point', (c) => c.parentNode.textContent),
          levels: each('g.throughput.level line.tp-level', (l) => l.parentNode.textContent),
          legend: [...box.querySelectorAll('[data-role="throughput-legend"] li')]
            .map((li) => [li.textContent, li.querySelector('.swatch').className]),
          width: svg.getBoundingClientRect().right,
        };"""
    )


def test_the_compare_tab_draws_the_models_throughput(driver, tmp_path):
    serving = tmp_path / "serving.csv"
    with serving.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(ROW))
        writer.writeheader()
        writer.writerow(ROW)
    with Server(tmp_path, SERVING=str(serving)) as server:
        page = Page(driver, server)
        page.by_id("tab-compare").click()
        assert page.settled("compare") == "idle"
        assert not page.shown("compare-throughput")  # training work: no chart

        _choose(page, "compare-model", MODEL)
        assert page.settled("compare") == "idle"
        page.wait(lambda: page.shown("compare-throughput"), "the throughput chart")
        status, t = server.api(
            "GET", f"/v1/throughput?model={MODEL}&precision=fp16&input_tokens=1000"
            "&output_tokens=1000&curves=5",
        )  # fmt: skip
        assert status == 200, t
        drawn = _drawn(page)
        assert drawn["title"] == drawn["label"] and MODEL in drawn["title"]
        assert drawn["axes"] == [
            "Per user [tokens/s]",
            "Tokens/s per GPU [tokens/s, input + output]",
        ]
        # one estimated curve per curve of the answer: its P50 line and its P10-P90 band
        curves = t["curves"]
        assert len(curves) == 5 and len(drawn["curves"]) == 5
        for c, (title, line, band) in zip(curves, drawn["curves"], strict=True):
            assert title.startswith(f"{c['gpu']} \u00d7{c['gpus']} (G {c['gpus_per_replica']})")
            n = len(c["tokens_per_s_per_user"])
            assert (line, band) == (n, 2 * n)
        # the server's row a dot, the catalog's rows without a per-user speed dashed levels
        # (a row holding for several builds of its GPU once, with them all)
        mine = [o for o in t["options"] if o["origin"] == "yours"]
        builds = ", ".join(f"\u00d7{o['gpus']}" for o in mine)
        assert drawn["dots"] == [f"{H100} {builds}, yours: {mine[0]['row_id']}"]
        measured = [o for o in t["options"] if o["origin"] == "measured"]
        assert measured and all(o["tokens_per_s_per_user"] is None for o in measured)
        assert len(drawn["levels"]) == len({o["row_id"] for o in measured})
        assert all("measured: " in x and "per-user speed not measured" in x
                   for x in drawn["levels"])  # fmt: skip
        legend = [text for text, _ in drawn["legend"]]
        assert legend[:5] == [x[0] for x in drawn["curves"]]
        assert sorted(legend[5:]) == sorted(drawn["dots"] + drawn["levels"])
        kinds = {text: swatch.split()[1] for text, swatch in drawn["legend"]}
        assert [kinds[x] for x in legend[:5]] == ["estimated"] * 5
        assert [kinds[x] for x in drawn["dots"]] == ["yours"]
        assert {kinds[x] for x in drawn["levels"]} == {"level"}
        assert drawn["desc"] == "; ".join(legend)

        page.screenshot("web-compare-throughput", 1280)
        page.viewport(375, 800)  # on a phone: inside the screen, legend below
        page.charts_drawn()
        assert _drawn(page)["width"] <= 375
        page.screenshot("web-compare-throughput-phone", 375)

        _choose(page, "compare-model", "")  # no model: the chart goes
        assert page.settled("compare") == "idle"
        assert not page.shown("compare-throughput")
        assert page.errors() == []
