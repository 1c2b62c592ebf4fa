// The compare view: every owned and rented option of the catalog ranked by cost per reference
// GPU-hour at one utilisation (POST /v1/compare), or, with a model chosen, every owned, rented
// and API option of serving it by cost per M tokens. The sentences are the server's (the
// answer's `wording`, the options' `name` and `pricing_name`), the same that `costmodel
// compare` prints: the cheapest option of each side and the break-evens, then the options
// cheapest first (the TOP cheapest until "show all"), a † on those whose speed comes from peak
// ratios, each option's carbon per unit of work (a dash and the server's footnote where it is
// not known, the server's sentence of what it counts below); by model, each option's speed,
// measured (a \u2021 when under other conditions than asked) or estimated (a \u00a7 and the
// server's footnote of its error), its source, and what was left out. With "rank by carbon" the server orders the options
// by carbon, the cheapest of each side still highlighted. The inputs
// are the request's options (the serving ones shown only with a model); the request is sent a
// moment after each edit (lifecycle.js: debounced, the latest edit wins) and the API's errors
// are shown beside the field their path names.

import { api } from "../api.js";
import { throughputChart, throughputSeries } from "../charts.js";
import { counted, fmtGrams, fmtNumber, fmtShare, fmtUnitCost, fmtUsd } from "../format.js";
import { Field, Lifecycle } from "../lifecycle.js";
import { drawChart, el } from "../render.js";
import { SIDES } from "../sides.js";

export const ENDPOINT = "/v1/compare";
/** Rows shown until "show all". */
export const TOP = 25;
/** A `percent` field's value over its share in the request. */
const PERCENT = 100;
/** The request options that only a comparison by model has (besides `model` itself). */
const SERVING = [
  "input_tokens",
  "output_tokens",
  "min_tokens_per_s_per_user",
  "max_tpot_ms",
  "max_ttft_ms",
];
/** The estimated curves the throughput chart asks for (GET /v1/throughput `curves`). */
export const CURVES = 5;
/** The compare request's keys that GET /v1/throughput takes too. */
const THROUGHPUT = ["model", "precision", ...SERVING];
/** Each option's tag in the table: the owned side's "own", another side's name in a list of
 * options ("rent", "API"; the server's words, SIDES), its pricing in words after it. */
function tag(o) {
  return SIDES[o.side].owned ? "own" : SIDES[o.side].option;
}

function fromCatalog(o) {
  return o.price_origin !== "prices";
}

/** The conditions of an option's serving row that differ from the question (none for an API). */
function caveats(o) {
  return (o.source && o.source.caveats) || [];
}

/** Whether an option's serving speed is estimated, not measured. */
function estimated(o) {
  return Boolean(o.source && o.source.origin === "estimated");
}

/** The mark after an option's name: estimated, or measured under other conditions. */
function mark(o) {
  if (estimated(o)) return " \u00a7";
  return caveats(o).length ? " \u2021" : "";
}

/** How the speed column marks a speed by its origin. */
const SPEED_MARKS = { yours: " yours", estimated: " est." };

function price(o) {
  const per = { rent: "/h", api: "/M" }[o.side];
  const text = per ? `${fmtUnitCost(o.price_usd)}${per}` : `${fmtUsd(o.price_usd)}/GPU`;
  return text + (fromCatalog(o) ? "" : "*");
}

/** An option's cost in the comparison's unit. */
function cost(o) {
  return o.cost_per_unit || o.cost_per_reference_gpu_hour;
}

function same(a, b) {
  return (
    Boolean(a && b) &&
    a.side === b.side &&
    a.id === b.id &&
    a.pricing === b.pricing &&
    a.gpu_count === b.gpu_count
  );
}

/** "Must be greater than 0 and less than or equal to 100." for the range "(0, 100]". */
function outside(range) {
  const m = /^([[(])\s*(-?[\d.,]+),\s*(-?[\d.,]+)\s*([\])])$/.exec(range || "");
  if (!m) return null;
  const low = Number(m[2].replaceAll(",", ""));
  const high = Number(m[3].replaceAll(",", ""));
  const openLow = m[1] === "(";
  const openHigh = m[4] === ")";
  const words =
    `Must be greater than${openLow ? "" : " or equal to"} ${m[2]} and ` +
    `less than${openHigh ? "" : " or equal to"} ${m[3]}.`;
  return (x) =>
    x < low || (openLow && x === low) || x > high || (openHigh && x === high) ? words : null;
}

class Compare {
  /** `view`: the view's <section>. */
  constructor(view) {
    this.view = view;
    const q = (role) => view.querySelector(`[data-role="${role}"]`);
    this.fields = [...view.querySelectorAll("[data-path]")].map((node) => new Field(node));
    this.verdict = q("verdict");
    this.about = q("about");
    this.table = q("ranking");
    this.peaks = q("peaks");
    this.unknownCarbon = q("unknown-carbon");
    this.carbon = q("carbon");
    this.notes = q("notes");
    this.uncertainty = q("uncertainty");
    this.ruledOut = q("ruled-out");
    this.throughput = q("throughput");
    this.asked = 0; // the throughput chart drawn is that of the latest answer
    this.toggle = view.querySelector('[data-action="show-all"]');
    this.model = this.fields.find((f) => f.path === "model");
    this.serving = this.fields.filter((f) => SERVING.includes(f.path));
    this.result = null;
    this.showAll = false;
    this.life = new Lifecycle(view, {
      fields: this.fields,
      request: () => ({ path: ENDPOINT, body: this.body() }),
      show: (result) => this.show(result),
      words: {
        working: "Comparing\u2026",
        earlier: "earlier inputs",
        valid: "the last valid inputs",
      },
    });
    this.loaded = false;
    for (const field of this.fields) {
      field.input.addEventListener(field.input.tagName === "SELECT" ? "change" : "input", () =>
        this.changed(field),
      );
      const shown = field.root.dataset.default;
      if (field.input.tagName === "INPUT" && shown !== undefined) field.input.placeholder = shown;
    }
    this.toggle.addEventListener("click", () => {
      this.showAll = !this.showAll;
      this.drawTable();
    });
    this.showServing();
  }

  /** Whether a model is chosen: the work is serving it, counted in M tokens. */
  byModel() {
    return Boolean(this.model && this.model.input.value);
  }

  /** The serving options are shown (and sent) only with a model; hidden, their errors go. */
  showServing() {
    const shown = this.byModel();
    for (const field of this.serving) {
      field.root.hidden = !shown;
      if (!shown) this.life.accept(field);
    }
  }

  /** The first time the view is shown: compare at once. */
  start() {
    if (this.loaded) return;
    this.loaded = true;
    for (const field of this.fields) this.check(field);
    if (this.life.fieldErrors.size) this.schedule();
    else this.life.evaluate();
  }

  // --- the request ------------------------------------------------------------------------

  /** The field's value in the request (undefined: left out, the default); throws Error with
   * the page's own message for text that is not a number or a share out of range. */
  value(field) {
    const raw = field.input.value.trim();
    if (field.kind === "choice" || raw === "") return raw === "" ? undefined : raw;
    const x = Number(raw);
    if (!Number.isFinite(x)) throw new Error(`${JSON.stringify(raw)} is not a number`);
    if (field.kind !== "percent") return x;
    const problem = outside(field.root.dataset.range);
    const message = problem && problem(x);
    if (message) throw new Error(message);
    return Number((x / PERCENT).toPrecision(12));
  }

  /** The request the inputs describe. */
  body() {
    const body = {};
    for (const field of this.fields) {
      if (field.root.hidden) continue;
      const value = this.value(field);
      if (value !== undefined) body[field.path] = value;
    }
    return body;
  }

  /** Check `field`'s text; true when it can be sent (else its error is shown beside it). */
  check(field) {
    try {
      this.value(field);
    } catch (exc) {
      this.life.refuse(field, exc.message);
      return false;
    }
    this.life.accept(field);
    return true;
  }

  changed(field) {
    if (field === this.model) this.showServing();
    if (this.check(field)) this.schedule();
  }

  // --- evaluation -------------------------------------------------------------------------

  /** Compare a moment after the last edit. */
  schedule() {
    this.life.schedule();
  }

  /** Draw `result`; the status line. */
  show(result) {
    this.result = result;
    this.render(result);
    const r = result.request;
    return (
      `Up to date: ${counted(result.options.length, "option")}, ${counted(r.samples, "draw")} ` +
      `each, seed ${r.seed}, catalog ${result.catalog.version}.`
    );
  }

  // --- the answer -------------------------------------------------------------------------

  render(result) {
    // One line each, as the CLI prints them; a full stop ends each for the screen reader.
    this.verdict.replaceChildren(
      ...result.wording.summary.flatMap((line, i) => [
        ...(i ? [" "] : []),
        el("span", { class: "line" }, `${line}.`),
      ]),
    );
    const uncertainty = Object.entries(result.uncertainty || {})
      .map(([key, spread]) => `${key} \u00b1${fmtShare(spread)}`)
      .join(", ");
    const sides = result.model ? "owned, rented and API option" : "owned and rented option";
    this.about.textContent = `${result.wording.heading}. Highlighted: the cheapest ${sides}.`;
    this.uncertainty.textContent =
      "P10\u2013P90 span the draws of a triangular uncertainty around each catalog value" +
      `${uncertainty ? ` (${uncertainty})` : ""}.`;
    this.drawTable();
    this.drawRuledOut(result.ruled_out || []);
    this.askThroughput(result);
  }

  // --- the throughput chart ---------------------------------------------------------------

  /** By model, ask GET /v1/throughput for the chart of the model, shape and targets compared;
   * without a model, or when the question has no answer there, the chart is hidden. */
  async askThroughput(result) {
    const asked = ++this.asked;
    this.throughput.hidden = true;
    if (!result.model) return;
    const query = new URLSearchParams({ curves: String(CURVES) });
    for (const key of THROUGHPUT) {
      const value = result.request[key];
      if (value !== null && value !== undefined) query.set(key, String(value));
    }
    let answer;
    try {
      answer = await api(`/v1/throughput?${query}`);
    } catch {
      return; // an inline model, or one no GPU serves as asked: the ranking says why
    }
    if (asked === this.asked) this.drawThroughput(answer);
  }

  drawThroughput(t) {
    const series = throughputSeries(t);
    if (!series.some((s) => s.user)) return; // nothing to place on the per-user axis
    this.throughput.hidden = false;
    const q = (role) => this.throughput.querySelector(`[data-role="${role}"]`);
    const drawn = series.filter((s) => s.kind !== "estimated").length;
    const rows = t.options.filter((o) => o.origin !== "estimated").map((o) => o.row_id);
    const measured = new Set(rows).size;
    const of = measured > drawn ? ` of ${fmtNumber(measured)}` : "";
    const points = measured
      ? `${counted(drawn, "measured row")}${of}, a dot at its per-user speed, a dashed level ` +
        "where that was not measured"
      : "no measured row holds";
    q("throughput-about").textContent =
      `${t.model} at ${t.precision}, ${fmtNumber(t.input_tokens)} / ` +
      `${fmtNumber(t.output_tokens)} tokens per request: the ${counted(t.curves.length, "GPU")} ` +
      `estimated fastest, each curve its best build as the batch grows from one request; ${points}.`;
    q("throughput-legend").replaceChildren(
      ...series.map((s) =>
        el(
          "li",
          { class: `series-${s.series}` },
          el("span", { class: `swatch ${s.kind}`, "aria-hidden": "true" }),
          s.text,
        ),
      ),
    );
    drawChart(q("throughput-chart"), (width) => throughputChart(t, series, width));
  }

  /** The ranking's header row; by model, with each option's speed and source. */
  head(result) {
    const per = result.model ? "/M tokens" : "";
    const cols = [
      ["#", "num"],
      ["Option", ""],
      ["Own or rent", ""],
      [`P50 [USD${per}]`, "num"],
      [`P10\u2013P90 [USD${per}]`, "num"],
      [`CO2e P50 [g${per}]`, "num"],
      ["Price", "num"],
      ...(result.model
        ? [
            ["Tokens/s per GPU", "num"],
            ["Measured, estimated or priced", ""],
          ]
        : []),
    ];
    const cells = cols.map(([text, cls]) => el("th", { scope: "col", class: cls || null }, text));
    return el("thead", {}, el("tr", {}, ...cells));
  }

  /** Option `o`, ranked `i + 1`, as a table row. */
  row(result, o, i) {
    const best = [result.cheapest_buy, result.cheapest_rent, result.cheapest_api].some((b) =>
      same(o, b),
    );
    const c = cost(o);
    const cells = [
      el("td", { class: "num" }, String(i + 1)),
      el(
        "th",
        { scope: "row", class: "option" },
        o.name + (o.from_peaks ? " \u2020" : "") + mark(o),
      ),
      el(
        "td",
        { class: "side" },
        el("span", { class: `side-tag ${o.side}` }, tag(o)),
        SIDES[o.side].owned ? null : ` ${o.pricing_name}`,
      ),
      el("td", { class: "num" }, fmtUnitCost(c.p50)),
      el("td", { class: "num" }, `${fmtUnitCost(c.p10)}\u2013${fmtUnitCost(c.p90)}`),
      el("td", { class: "num carbon" }, fmtGrams(o.carbon_per_unit && o.carbon_per_unit.p50)),
      el("td", { class: "num" }, price(o)),
    ];
    if (result.model) {
      const speed = o.tokens_per_s_per_gpu;
      const s = o.source;
      const cited = s ? `${s.id} (${s.as_of})` : "";
      const source = s && s.conditions ? `${s.origin}: ${s.conditions}; ${cited}` : cited;
      const marked = (s && SPEED_MARKS[s.origin]) || "";
      cells.push(el("td", { class: "num" }, speed ? fmtNumber(speed) + marked : ""));
      cells.push(el("td", { class: "source", title: o.source ? o.source.source : null }, source));
    }
    return el("tr", { class: `side-${o.side}${best ? " best" : ""}` }, ...cells);
  }

  drawTable() {
    const result = this.result;
    if (!result) return;
    const options = result.options;
    const shown = this.showAll ? options : options.slice(0, TOP);
    const body = el("tbody", {}, ...shown.map((o, i) => this.row(result, o, i)));
    const caption = this.table.querySelector("caption");
    this.table.replaceChildren(...[caption, this.head(result), body].filter(Boolean));

    this.peaks.textContent = this.result.wording.peaks_note;
    this.peaks.hidden = !shown.some((o) => o.from_peaks);
    this.unknownCarbon.textContent = result.wording.unknown_carbon_note;
    this.unknownCarbon.hidden = !shown.some((o) => !o.carbon_per_unit);
    this.carbon.textContent = result.wording.carbon_note || "";
    this.carbon.hidden = !result.wording.carbon_note;
    this.notes.textContent = this.notesText(result, shown);
    this.toggle.hidden = options.length <= TOP;
    this.toggle.setAttribute("aria-expanded", String(this.showAll));
    this.toggle.textContent = this.showAll
      ? `Show the first ${TOP}`
      : `Show all ${fmtNumber(options.length)} options`;
  }

  /** What the table shows and leaves out, in a sentence or two. */
  notesText(result, shown) {
    const r = result.request;
    const options = result.options;
    const notes = [counted(options.length, "option")];
    if (options.length > shown.length) notes.push(`the first ${fmtNumber(shown.length)} shown`);
    if (r.min_memory_gb !== null && r.min_memory_gb !== undefined)
      notes.push(`${fmtNumber(result.left_out_by_min_memory)} left out by the minimum memory`);
    if ((result.ruled_out || []).length)
      notes.push(`${fmtNumber(result.ruled_out.length)} ruled out (listed below)`);
    if (shown.some((o) => !fromCatalog(o))) notes.push("* price from the service's prices file");
    const differ = [...new Set(shown.flatMap(caveats))].sort();
    if (differ.length)
      notes.push(`\u2021 measured under other conditions than asked: ${differ.join("; ")}`);
    const guessed = shown.some(estimated) ? result.wording.estimated_note : "";
    const left = result.wording.left_out;
    return `${notes.join("; ")}.${guessed ? ` ${guessed}` : ""}${left ? ` ${left}` : ""}`;
  }

  drawRuledOut(items) {
    const head = el(
      "thead",
      {},
      el(
        "tr",
        {},
        el("th", { scope: "col" }, "Option"),
        el("th", { scope: "col" }, "Own or rent"),
        el("th", { scope: "col" }, "Why"),
      ),
    );
    const body = el(
      "tbody",
      {},
      ...items.map((o) =>
        el(
          "tr",
          {},
          el("th", { scope: "row", class: "option" }, o.name),
          el("td", {}, SIDES[o.side].owned ? tag(o) : `${tag(o)} ${o.pricing_name}`),
          el("td", {}, o.reason),
        ),
      ),
    );
    const caption = this.ruledOut.querySelector("caption");
    this.ruledOut.replaceChildren(...[caption, head, body].filter(Boolean));
    this.ruledOut.closest("details").hidden = !items.length;
  }
}

/** The view's controller: `loaded`, `start()` when first shown, `schedule()` to ask again. */
export function create(view) {
  return new Compare(view);
}
