// One view's document editor: the form and the YAML text kept in sync with one document, which
// is evaluated a moment after each edit (lifecycle.js: debounced, the latest edit wins). The
// API's error paths ("buy.pue") are shown beside the field they name, the others under the YAML.

import { ENDPOINTS } from "./api.js";
import {
  getPath,
  isMapping,
  lineOfPath,
  numbersOf,
  parseYaml,
  partsOf,
  setPath,
  toYaml,
  valueOf,
} from "./doc.js";
import { fmtNumber, fmtUsd, formatG } from "./format.js";
import { Field, Lifecycle } from "./lifecycle.js";
import { el } from "./render.js";

// Selects whose empty choice removes a whole optional block, and what a new block holds
// besides the chosen id.
const OPTIONAL_BLOCKS = {
  "reserve.instance": {
    block: "reserve",
    fresh: { pricing: "reserved_1y", instances: { min: 0, max: 2 } },
  },
  "api.model": { block: "api", fresh: {} },
};
// Selects whose choice replaces their whole block (a plan's burst to an API takes only api):
// the keys it replaces come back with the empty choice.
const REPLACING = { "burst.api.model": "burst" };
// True when the key `path` ("burst.api") is set by a REPLACING select.
const replacing = (path) => Object.keys(REPLACING).some((p) => p.startsWith(`${path}.`));
// The block a field's key lies in when a REPLACING select makes that block ("burst.api" of
// "burst.api.g_co2e_per_mtok"): the field shows only while the document has it; else "".
const inReplaced = (path) =>
  Object.keys(REPLACING)
    .map((p) => p.slice(0, p.lastIndexOf(".")))
    .find((block) => path.startsWith(`${block}.`) && !REPLACING[path]) || "";
// The block a REPLACING select empties when the key `path` lies in that block beside the key
// the select sets ("burst" of "burst.instance", not of "burst.api.model"); else "".
const besideReplacing = (path) =>
  REPLACING[path] || inReplaced(path)
    ? ""
    : Object.values(REPLACING).find((block) => path.startsWith(`${block}.`)) || "";
const INLINE = "__inline__";
// The API offer select's choice of prices of one's own (an api block without api.model), and
// the prices an offer gives (copied into the block when one leaves the offer for them).
const OWN_PRICES = "__prices__";
const OWN_PRICES_FIELD = "api.model";
const OFFER_PRICES = ["input_usd_per_mtok", "output_usd_per_mtok", "cached_input_usd_per_mtok"];
// What a workload of inference starts with besides a model of the catalog: a chat-sized request.
const FRESH_INFERENCE = { input_tokens: 1000, output_tokens: 1000 };
// True when `node` (with data-work: the kinds of work it is for) is for work `kind`.
const forKind = (node, kind) => node.dataset.work.split(" ").includes(kind);
// Each kind of select: the catalog rows it lists.
const ROWS = { gpu: "gpus", instance: "instances", model: "models", offer: "offers", grid: "grids" };
// A grid select's choice of a value of one's own (a number or a distribution, in its parts),
// and the groups of its catalog rows.
const OWN_VALUE = "__value__";
const GRID_GROUPS = {
  country: "countries",
  us_subregion: "US eGRID subregions",
  cloud_region: "cloud regions",
};
const PRICES = {
  on_demand: "on_demand_usd_per_hour",
  spot: "spot_usd_per_hour",
  reserved_1y: "reserved_1y_usd_per_hour",
  reserved_3y: "reserved_3y_usd_per_hour",
};

export class Editor {
  /**
   * `view`: the view's <section>; `kind`: "scenario" or "plan"; `render(result, view)` draws a
   * result; `work`: the rules of the kinds of work (views.py work_rules). The catalog's rows
   * arrive later, through setCatalog.
   */
  constructor(view, kind, render, work) {
    this.view = view;
    this.kind = kind;
    this.render = render;
    this.work = work;
    this.fields = [...view.querySelectorAll("[data-path]")].map((node) => new Field(node));
    this.textarea = view.querySelector('[data-role="yaml"]');
    this.yamlErrors = view.querySelector('[data-role="yaml-errors"]');
    this.doc = {};
    this.template = null; // the document as last read from the text: the order of its keys
    this.result = null;
    this.catalog = { gpus: [], instances: [], models: [], offers: [], grids: [] };
    this.stash = {}; // by kind of work: what the document held of it when it was switched away
    this.replaced = {}; // by block: its keys a REPLACING select's choice put aside
    this.version = 0; // bumped on every change of the document
    this.parseError = null;
    this.life = new Lifecycle(view, {
      fields: this.fields,
      request: () => ({ path: ENDPOINTS[kind], body: this.doc }),
      show: (result) => this.show(result),
      words: {
        working: "Evaluating\u2026",
        earlier: "an earlier document",
        valid: `the last valid ${kind}`,
        job:
          `This ${kind} is too much work to answer as you type: \u201cSave run\u201d ` +
          "evaluates it as a job and shows its progress here.",
      },
      blocked: () => this.parseError && this.unreadable(),
      unplaced: (errors) =>
        this.showYamlErrors(
          errors.map((e) => ({
            ...e,
            line: e.path ? lineOfPath(this.textarea.value, e.path) : null,
          })),
        ),
    });
    this.loaded = false; // a document was loaded
    this.saved = null; // {id, version}: the run stored from this document's version

    for (const field of this.fields) {
      for (const control of field.controls) {
        control.addEventListener(control.tagName === "SELECT" ? "change" : "input", () =>
          this.fromField(field, control),
        );
      }
    }
    this.textarea.addEventListener("input", () => this.fromText());
  }

  // --- loading ----------------------------------------------------------------------------

  /** Show YAML `text`; with `result` (its evaluation) nothing is requested. */
  loadText(text, result = null) {
    this.loaded = true;
    this.saved = null;
    this.stash = {};
    this.replaced = {};
    this.textarea.value = text;
    this.fromText({ evaluate: !result });
    if (result) this.life.show(result);
  }

  /** Show document `doc` (written as YAML); with `result` nothing is requested. */
  loadDocument(doc, result = null) {
    this.loadText(toYaml(doc), result);
  }

  setCatalog(catalog) {
    this.catalog = catalog;
    for (const field of this.fields) {
      if (ROWS[field.kind]) this.fillOptions(field);
    }
    this.syncForm();
  }

  // --- edits ------------------------------------------------------------------------------

  fromText({ evaluate = true } = {}) {
    let doc;
    try {
      doc = parseYaml(this.textarea.value);
    } catch (exc) {
      this.parseError = exc;
      this.showYamlErrors([{ path: "", message: exc.message, line: exc.line }]);
      this.life.halt(this.unreadable());
      return;
    }
    this.parseError = null;
    this.doc = doc;
    this.template = structuredClone(doc);
    this.version += 1;
    this.life.clearFieldErrors();
    this.syncForm();
    this.showYamlErrors([]);
    if (evaluate) this.schedule();
    else this.life.abort(); // the answer comes with the text
  }

  unreadable() {
    const exc = this.parseError;
    return `The YAML cannot be read${exc.line ? ` (line ${exc.line})` : ""}: ${exc.message}`;
  }

  fromField(field, control = null) {
    let value;
    try {
      if (field.kind === "grid") {
        value = this.gridValue(field, control);
      } else if (field.input) {
        value = this.singleValue(field);
      } else {
        const raw = Object.fromEntries(Object.entries(field.parts).map(([k, i]) => [k, i.value]));
        value = valueOf(field.kind, raw, field.distName);
      }
    } catch (exc) {
      this.life.refuse(field, exc.message);
      return;
    }
    this.life.accept(field);
    if (value === INLINE) return; // the inline mapping stays as it is
    const block = OPTIONAL_BLOCKS[field.path];
    const key = field.path.split(".").pop();
    if (field.path === "workload.kind") {
      this.switchWork(value || field.root.dataset.default);
    } else if (value === OWN_PRICES) {
      this.ownPrices();
    } else if (REPLACING[field.path]) {
      this.replaceBlock(REPLACING[field.path], field.path, value);
    } else if (value !== undefined && this.leaveReplacing(besideReplacing(field.path))) {
      setPath(this.doc, field.path, value);
    } else if (block && value === undefined) {
      setPath(this.doc, block.block, undefined);
    } else if (block && getPath(this.doc, block.block) === undefined) {
      this.doc[block.block] = { [key]: value, ...structuredClone(block.fresh) };
    } else {
      setPath(this.doc, field.path, value);
    }
    this.version += 1;
    this.parseError = null;
    this.textarea.value = toYaml(this.doc, this.template);
    this.showYamlErrors([]);
    this.syncForm(field);
    this.schedule();
  }

  /** Set `path` (in a block's key, "burst.api.model") to `value`, the block's other keys put
   * aside; undefined gives the block back as it was before. */
  replaceBlock(block, path, value) {
    if (value === undefined) {
      this.restoreBlock(block, true);
      return;
    }
    const key = path.split(".")[1];
    const held = getPath(this.doc, `${block}.${key}`);
    this.putReplacing(block, key, isMapping(held) ? held : {});
    setPath(this.doc, path, value);
  }

  /** A key of `block` beside the one a REPLACING select set is being given (a burst instance
   * while the burst goes to an API): the select's key goes and the keys it put aside come
   * back, as with its empty choice. False when `block` holds no such key. */
  leaveReplacing(block) {
    if (!block) return false;
    const path = Object.keys(REPLACING).find((p) => REPLACING[p] === block);
    const key = path.split(".")[1];
    if (!isMapping(this.doc[block]) || !(key in this.doc[block])) return false;
    this.restoreBlock(block, true);
    return true;
  }

  /** Make `block` hold only `key`: `value`, its other keys put aside. */
  putReplacing(block, key, value) {
    const current = isMapping(this.doc[block]) ? this.doc[block] : {};
    if (!(key in current)) this.replaced[block] = current;
    this.doc[block] = { [key]: value };
  }

  /** Give `block` back the keys put aside (`always`: even if it holds some now). */
  restoreBlock(block, always = false) {
    const current = this.doc[block];
    if (!always && isMapping(current) && Object.keys(current).length) return;
    this.doc[block] = this.replaced[block] || {};
    delete this.replaced[block];
  }

  singleValue(field) {
    const raw = field.input.value;
    if (field.kind === "integer" || field.kind === "number") {
      const trimmed = raw.trim();
      if (trimmed === "") return undefined;
      const x = Number(trimmed);
      if (!Number.isFinite(x)) throw new Error(`${JSON.stringify(trimmed)} is not a number`);
      return x;
    }
    if (field.kind === "numbers") return numbersOf(raw);
    return raw === "" ? undefined : raw; // text, choice, gpu, instance
  }

  /** A grid field's value: the chosen catalog id, or the value of one's own in its parts;
   * choosing a value of one's own starts it at the intensity of the grid it replaces (so the
   * answer does not change until one edits it). */
  gridValue(field, control) {
    const chosen = field.input.value;
    field.own = chosen === OWN_VALUE;
    field.editedPart = control !== field.input;
    if (!field.own) return chosen === "" ? undefined : chosen;
    const raw = Object.fromEntries(Object.entries(field.parts).map(([k, i]) => [k, i.value]));
    const value = valueOf("uncertain", raw, field.distName);
    if (value !== undefined || field.editedPart) return value;
    const given = getPath(this.doc, field.path);
    if (given !== undefined && typeof given !== "string") return given;
    const id = typeof given === "string" ? given : getPath(this.resolved(), field.path);
    const row = this.catalog.grids.find((g) => g.id.toLowerCase() === String(id).toLowerCase());
    return row ? row.g_co2e_per_kwh : undefined;
  }

  /** The document as the last answer resolved it ({} before one). */
  resolved() {
    return this.result ? this.result.scenario : {};
  }

  // --- the kind of work -------------------------------------------------------------------

  /** The document's kind of work (workload.kind, or the default). */
  workKind() {
    return getPath(this.doc, "workload.kind") || this.work.default;
  }

  /**
   * Make the document one of work `kind`. What it holds of the kind it leaves (its workload,
   * each side's throughput key, the blocks of that kind only) is put aside, and what it held of
   * `kind` when it last left it comes back; the first time, a workload of `kind` is made from
   * the one left (its keys of both kinds kept, inference given a model of the catalog).
   */
  switchWork(kind) {
    const from = this.workKind();
    if (kind === from) {
      setPath(this.doc, "workload.kind", kind === this.work.default ? undefined : kind);
      return;
    }
    for (const field of this.fields) {
      const only = field.root.closest("[data-work]"); // the field's, or its section's
      if (only && !forKind(only, kind)) this.life.accept(field);
    }
    const left = this.takeWork(from);
    this.stash[from] = left;
    const back = this.stash[kind] || { workload: this.freshWorkload(kind, left.workload) };
    if (back.workload !== undefined) this.doc.workload = structuredClone(back.workload);
    Object.assign(this.doc, structuredClone(back.blocks || {}));
    const key = this.work.kinds[kind].throughput;
    for (const [side, value] of Object.entries(back.sides || {})) {
      if (isMapping(this.doc[side])) this.doc[side][key] = structuredClone(value);
    }
    for (const [path, value] of Object.entries(back.paths || {})) {
      const [block, key] = path.split(".");
      if (replacing(path)) this.putReplacing(block, key, structuredClone(value));
      else setPath(this.doc, path, structuredClone(value));
    }
  }

  /** Take out of the document what belongs to work `kind`: {workload, blocks, sides, paths}
   * (a block a REPLACING select's choice emptied gets back what it held before). */
  takeWork(kind) {
    const rules = this.work.kinds[kind];
    const out = { workload: this.doc.workload, blocks: {}, sides: {} };
    delete this.doc.workload;
    for (const block of rules.blocks) {
      if (block in this.doc) out.blocks[block] = this.doc[block];
      delete this.doc[block];
    }
    for (const [side, value] of Object.entries(this.doc)) {
      if (isMapping(value) && rules.throughput in value) {
        out.sides[side] = value[rules.throughput];
        delete value[rules.throughput];
      }
    }
    out.paths = {};
    for (const path of rules.paths) {
      const value = getPath(this.doc, path);
      if (value === undefined) continue;
      out.paths[path] = value;
      setPath(this.doc, path, undefined);
      if (replacing(path)) this.restoreBlock(path.split(".")[0]);
    }
    return out;
  }

  /** A workload of work `kind` from `left` (one of another kind): the keys only that kind had
   * dropped, a precision `kind` is not measured at dropped; for inference a model of the
   * catalog, one measured on the owned GPU (a scenario's buy.gpu, a plan's own.gpu) if there
   * is one, and FRESH_INFERENCE. */
  freshWorkload(kind, left) {
    const out = isMapping(left) ? structuredClone(left) : {};
    for (const [other, rules] of Object.entries(this.work.kinds)) {
      if (other !== kind) for (const key of rules.only) delete out[key];
    }
    if (out.precision && !this.work.kinds[kind].precisions.includes(out.precision))
      delete out.precision;
    if (kind === this.work.default) delete out.kind;
    else out.kind = kind;
    if (kind === "inference") {
      const owned = getPath(this.doc, "buy.gpu") || getPath(this.doc, "own.gpu");
      const gpu = String(owned || "").toLowerCase();
      const on = (m, p) => (m.measured_on[p] || []).includes(gpu);
      const models = this.catalog.models;
      const model = models.find((m) => m.precisions.some((p) => on(m, p))) || models[0];
      if (model) {
        out.model = model.id;
        out.precision = model.precisions.find((p) => on(model, p)) || model.precisions[0];
      }
      Object.assign(out, FRESH_INFERENCE);
    }
    return Object.keys(out).length ? out : undefined;
  }

  /** Show the fields, sections and choices of the document's kind of work only (a key of a
   * block a select makes, an API burst's, only with that block). */
  showWork() {
    const kind = this.workKind();
    for (const node of this.view.querySelectorAll("[data-work]"))
      node.hidden = !forKind(node, kind);
    for (const field of this.fields) {
      const block = inReplaced(field.path);
      if (block && !isMapping(getPath(this.doc, block))) field.root.hidden = true;
    }
  }

  /** The API block without a catalog offer: its prices stay, those it took from the offer
   * are written in (so the answer does not change until one edits them). */
  ownPrices() {
    const api = getPath(this.doc, "api");
    if (!isMapping(api)) {
      this.doc.api = {};
      return;
    }
    const offer = this.catalog.offers.find((o) => o.id === String(api.model).toLowerCase());
    for (const key of OFFER_PRICES) {
      if (api[key] === undefined && offer && offer[key] !== null) api[key] = offer[key];
    }
    delete api.model;
  }

  // --- the form from the document ---------------------------------------------------------

  /** Write the document into every field (but not into `except` or the focused input). */
  syncForm(except = null) {
    const resolved = this.resolved();
    for (const field of this.fields) {
      if (this.life.fieldErrors.has(field.path)) continue; // keep what the person typed
      const value = getPath(this.doc, field.path);
      const active = document.activeElement;
      if (field.kind === "grid") {
        const editing = field === except && field.editedPart;
        this.syncGrid(field, value, getPath(resolved, field.path), editing);
        continue;
      }
      if (field.input) {
        if (ROWS[field.kind]) this.selectOption(field, value, getPath(resolved, field.path));
        else if (field !== except && field.input !== active) {
          field.input.value =
            value === undefined || value === null
              ? ""
              : Array.isArray(value)
                ? value.join(", ")
                : String(value);
        }
        const shown = getPath(resolved, field.path);
        if (field.input.tagName === "INPUT") {
          field.input.placeholder =
            shown === undefined || shown === null || typeof shown === "object" ? "" : String(shown);
        }
        continue;
      }
      const { parts, label, editable, dist } = partsOf(field.kind, value);
      if (field !== except) {
        for (const [part, input] of Object.entries(field.parts)) {
          if (input !== active) input.value = parts[part];
          input.disabled = !editable;
        }
        field.distName = dist;
      }
      if (field.dist) field.dist.textContent = label;
      this.placeholders(field, getPath(resolved, field.path));
    }
    this.pricingLabels();
    this.measuredOn();
    this.showWork();
  }

  /** A grid field from its `value`: a catalog id selected (the empty choice naming the
   * `shown` id the answer resolved it to), or a value of one's own in its parts (kept while
   * the person edits them: `editing`). */
  syncGrid(field, value, shown, editing) {
    const given = value !== undefined && value !== null && typeof value !== "string";
    if (!editing) field.own = given;
    if (field.own) {
      for (const option of field.input.querySelectorAll("[data-extra]")) option.remove();
      field.input.value = OWN_VALUE;
      const { parts, label, editable, dist } = partsOf("uncertain", given ? value : undefined);
      if (!editing) {
        for (const [part, input] of Object.entries(field.parts)) {
          if (input !== document.activeElement) input.value = parts[part];
          input.disabled = !editable;
        }
        field.distName = dist;
      }
      field.dist.textContent = given ? label : "";
    } else {
      this.selectOption(field, value, shown);
      field.dist.textContent = "";
    }
    field.root.querySelector('[data-role="own-value"]').hidden = !field.own;
  }

  /** Under the model: the GPUs with a measured operating point of it at the precision. */
  measuredOn() {
    const note = this.view.querySelector('[data-role="measured"]');
    if (!note) return;
    const id = getPath(this.doc, "workload.model");
    const model = this.catalog.models.find((m) => m.id === String(id).toLowerCase());
    const field = this.fields.find((f) => f.path === "workload.precision");
    const precision = getPath(this.doc, "workload.precision") || field.root.dataset.default;
    const gpus = model ? model.measured_on[precision] || [] : [];
    const measured = model ? Object.keys(model.measured_on).join(", ") : "";
    note.textContent = !model
      ? ""
      : gpus.length
        ? `Measured at ${precision} on: ${gpus.join(", ")}.`
        : measured
          ? `Not measured at ${precision} (measured at ${measured}).`
          : "Not measured on any GPU: each side gives its throughput.";
  }

  placeholders(field, shown) {
    const set = (values) => {
      for (const [part, input] of Object.entries(field.parts))
        input.placeholder = values[part] ?? "";
    };
    if (field.kind === "uncertain") {
      if (typeof shown === "number") set({ mode: String(shown) });
      else if (shown && typeof shown === "object" && shown.dist)
        set({ low: shown.low, mode: shown.mode, high: shown.high });
      else set({});
    } else if (field.kind === "levels" && Array.isArray(shown) && shown.length) {
      const step = shown.length > 1 ? Number((shown[1] - shown[0]).toPrecision(6)) : "";
      set({ start: shown[0], stop: shown[shown.length - 1], step });
    } else if (field.kind === "counts" && shown && typeof shown === "object") {
      set(shown);
    }
  }

  // --- catalog selects --------------------------------------------------------------------

  /** The catalog's rows as the options of a catalog select (selected by syncForm), after its
   * empty choice; API offers of the workload's model first. */
  fillOptions(field) {
    const select = field.input;
    const empty = select.querySelector('option[value=""]');
    select.replaceChildren(...[empty].filter(Boolean));
    if (field.path === OWN_PRICES_FIELD)
      select.append(el("option", { value: OWN_PRICES }, "your own prices (below)"));
    if (field.kind === "grid")
      select.append(el("option", { value: OWN_VALUE }, "a value of your own (below)"));
    const model = String(getPath(this.doc, "workload.model") || "").toLowerCase();
    field.filledFor = model;
    const groups = new Map();
    for (const row of this.catalog[ROWS[field.kind]]) {
      const group = this.groupOf(field.kind, row, model);
      if (!groups.has(group)) groups.set(group, el("optgroup", { label: group }));
      groups.get(group).append(el("option", { value: row.id }, this.optionText(field.kind, row)));
    }
    const serving = [...groups.keys()].filter((g) => g.startsWith("serving "));
    const rest = [...groups.keys()].filter((g) => !g.startsWith("serving "));
    select.append(...[...serving, ...rest].map((g) => groups.get(g)));
  }

  groupOf(kind, row, model) {
    if (kind === "gpu") return row.family || "other";
    if (kind === "model") return "served models";
    if (kind === "grid") return GRID_GROUPS[row.kind] || "other";
    if (kind === "offer" && model && row.model === model) return `serving ${model}`;
    return row.provider || "other";
  }

  optionText(kind, row) {
    if (kind === "gpu") {
      const price =
        row.price_usd === null || row.price_usd === undefined ? "" : `, ${fmtUsd(row.price_usd)}`;
      return `${row.name} (${fmtNumber(row.memory_gb)} GB${price})`;
    }
    if (kind === "model") {
      const active = row.active_params_b ? `, ${fmtNumber(row.active_params_b)}B active` : "";
      return `${row.name} (${fmtNumber(row.params_b)}B parameters${active})`;
    }
    if (kind === "grid") {
      const est = row.estimated ? ", estimated" : "";
      const figure = `${formatG(row.g_co2e_per_kwh)} g/kWh, ${row.year}, ${row.basis}${est}`;
      return `${row.id}: ${row.name} (${figure})`;
    }
    if (kind === "offer") {
      const prices = `${fmtUsd(row.input_usd_per_mtok)} in, ${fmtUsd(row.output_usd_per_mtok)} out`;
      return `${row.provider}: ${row.name} (${prices} per M tokens)`;
    }
    const gpu = this.catalog.gpus.find((g) => g.id === row.gpu);
    return `${row.name}: ${row.gpu_count}\u00d7 ${gpu ? gpu.name : row.gpu}, ${fmtUsd(row.on_demand_usd_per_hour)}/h`;
  }

  /** Select `value` (a catalog id, an inline mapping or nothing), adding an option if needed;
   * an empty choice shows the `shown` id the answer resolved it to ("default: v100-..."). */
  selectOption(field, value, shown) {
    const select = field.input;
    const model = String(getPath(this.doc, "workload.model") || "").toLowerCase();
    if (field.kind === "offer" && field.filledFor !== model) this.fillOptions(field);
    for (const option of select.querySelectorAll("[data-extra]")) option.remove();
    const empty = select.querySelector("option[data-empty]");
    if (empty)
      empty.textContent =
        typeof shown === "string" && value === undefined
          ? `${empty.dataset.empty}: ${shown}`
          : empty.dataset.empty;
    let wanted = "";
    const own = value === undefined && isMapping(getPath(this.doc, "api"));
    if (field.path === OWN_PRICES_FIELD && own) {
      wanted = OWN_PRICES;
    } else if (value && typeof value === "object") {
      select.prepend(
        el(
          "option",
          { value: INLINE, "data-extra": "" },
          `inline: ${value.name || "unnamed"} (edit it in the YAML)`,
        ),
      );
      wanted = INLINE;
    } else if (typeof value === "string") {
      const match = [...select.options].find((o) => o.value.toLowerCase() === value.toLowerCase());
      if (match) wanted = match.value;
      else {
        const rows = this.catalog[ROWS[field.kind]];
        const note = rows.length ? "not in the catalog" : "loading the catalog";
        select.prepend(el("option", { value, "data-extra": "" }, `${value} (${note})`));
        wanted = value;
      }
    }
    select.value = wanted;
  }

  /** Pricing choices named with the chosen instance's catalog price. */
  pricingLabels() {
    for (const field of this.fields) {
      if (!field.path.endsWith(".pricing") || !field.input) continue;
      const block = field.path.split(".")[0];
      const id = getPath(this.doc, `${block}.instance`);
      const row =
        typeof id === "string"
          ? this.catalog.instances.find((i) => i.id === id.toLowerCase())
          : null;
      for (const option of field.input.options) {
        const choice = option.value || field.root.dataset.default;
        const price = row ? row[PRICES[choice]] : undefined;
        const priced =
          price === undefined
            ? ""
            : price === null
              ? " (no catalog price)"
              : ` (${fmtUsd(price)}/h)`;
        option.textContent = (option.value ? choice : `default: ${choice}`) + priced;
      }
    }
  }

  // --- evaluation -------------------------------------------------------------------------

  /** Evaluate the document a moment after the last edit. */
  schedule() {
    this.life.schedule();
  }

  /** Draw `result`; the status line. */
  show(result) {
    this.result = result;
    this.render(result, this.view);
    this.syncForm();
    return `Up to date: ${fmtNumber(result.samples)} draws, seed ${result.seed}, catalog ${result.catalog.version}.`;
  }

  // --- errors -----------------------------------------------------------------------------

  showYamlErrors(errors) {
    this.yamlErrors.replaceChildren(
      ...errors.map((e) => {
        const where = [e.line ? `line ${e.line}` : "", e.path].filter(Boolean).join(", ");
        return el("li", {}, where ? `${where}: ${e.message}` : e.message);
      }),
    );
    this.yamlErrors.hidden = !errors.length;
    if (errors.length) this.textarea.setAttribute("aria-invalid", "true");
    else this.textarea.removeAttribute("aria-invalid");
  }
}
