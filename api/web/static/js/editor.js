// One view's document editor: the form and the YAML text kept in sync with one document, which
// is evaluated a moment after each edit (lifecycle.js: debounced, the latest edit wins). The
// API's error paths ("buy.pue") are shown beside the field they name, the others under the YAML.

import { ENDPOINTS } from "./api.js";
import { getPath, lineOfPath, parseYaml, partsOf, setPath, toYaml, valueOf } from "./doc.js";
import { fmtNumber, fmtUsd } from "./format.js";
import { Field, Lifecycle } from "./lifecycle.js";
import { el } from "./render.js";

// Selects whose empty choice removes a whole optional block, and what a new block holds.
const OPTIONAL_BLOCKS = {
  "reserve.instance": {
    block: "reserve",
    fresh: { pricing: "reserved_1y", instances: { min: 0, max: 2 } },
  },
};
const INLINE = "__inline__";
const PRICES = {
  on_demand: "on_demand_usd_per_hour",
  spot: "spot_usd_per_hour",
  reserved_1y: "reserved_1y_usd_per_hour",
  reserved_3y: "reserved_3y_usd_per_hour",
};

export class Editor {
  /**
   * `view`: the view's <section>; `kind`: "scenario" or "plan"; `render(result, view)` draws a
   * result. The catalog's GPUs and instances arrive later, through setCatalog.
   */
  constructor(view, kind, render) {
    this.view = view;
    this.kind = kind;
    this.render = render;
    this.fields = [...view.querySelectorAll("[data-path]")].map((node) => new Field(node));
    this.textarea = view.querySelector('[data-role="yaml"]');
    this.yamlErrors = view.querySelector('[data-role="yaml-errors"]');
    this.doc = {};
    this.template = null; // the document as last read from the text: the order of its keys
    this.result = null;
    this.catalog = { gpus: [], instances: [] };
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
          this.fromField(field),
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
      if (field.kind === "gpu" || field.kind === "instance") this.fillOptions(field);
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

  fromField(field) {
    let value;
    try {
      if (field.input) {
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
    if (block && value === undefined) {
      setPath(this.doc, block.block, undefined);
    } else if (block && getPath(this.doc, block.block) === undefined) {
      this.doc[block.block] = { instance: value, ...structuredClone(block.fresh) };
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

  singleValue(field) {
    const raw = field.input.value;
    if (field.kind === "integer" || field.kind === "number") {
      const trimmed = raw.trim();
      if (trimmed === "") return undefined;
      const x = Number(trimmed);
      if (!Number.isFinite(x)) throw new Error(`${JSON.stringify(trimmed)} is not a number`);
      return x;
    }
    return raw === "" ? undefined : raw; // text, choice, gpu, instance
  }

  // --- the form from the document ---------------------------------------------------------

  /** Write the document into every field (but not into `except` or the focused input). */
  syncForm(except = null) {
    const resolved = this.result ? this.result.scenario : {};
    for (const field of this.fields) {
      if (this.life.fieldErrors.has(field.path)) continue; // keep what the person typed
      const value = getPath(this.doc, field.path);
      const active = document.activeElement;
      if (field.input) {
        if (field.kind === "gpu" || field.kind === "instance") this.selectOption(field, value);
        else if (field !== except && field.input !== active) {
          field.input.value = value === undefined || value === null ? "" : String(value);
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

  /** The catalog's rows as the options of a GPU or instance select (selected by syncForm). */
  fillOptions(field) {
    const select = field.input;
    select.replaceChildren();
    if (OPTIONAL_BLOCKS[field.path])
      select.append(el("option", { value: "" }, "none (no reservation)"));
    const rows = field.kind === "gpu" ? this.catalog.gpus : this.catalog.instances;
    const groups = new Map();
    for (const row of rows) {
      const group = field.kind === "gpu" ? row.family || "other" : row.provider || "other";
      if (!groups.has(group)) groups.set(group, el("optgroup", { label: group }));
      groups.get(group).append(el("option", { value: row.id }, this.optionText(field.kind, row)));
    }
    select.append(...groups.values());
  }

  optionText(kind, row) {
    if (kind === "gpu") {
      const price =
        row.price_usd === null || row.price_usd === undefined ? "" : `, ${fmtUsd(row.price_usd)}`;
      return `${row.name} (${fmtNumber(row.memory_gb)} GB${price})`;
    }
    const gpu = this.catalog.gpus.find((g) => g.id === row.gpu);
    return `${row.name}: ${row.gpu_count}\u00d7 ${gpu ? gpu.name : row.gpu}, ${fmtUsd(row.on_demand_usd_per_hour)}/h`;
  }

  /** Select `value` (a catalog id, an inline mapping or nothing), adding an option if needed. */
  selectOption(field, value) {
    const select = field.input;
    for (const option of select.querySelectorAll("[data-extra]")) option.remove();
    let wanted = "";
    if (value && typeof value === "object") {
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
        const note = this.catalog.gpus.length ? "not in the catalog" : "loading the catalog";
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
