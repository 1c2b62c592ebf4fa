// A scenario or plan document as plain data: key paths, YAML text and the form's multi-input
// fields (low / likely / high, from / to / step, fewest / most).

import { dump, load, YAML11_SCHEMA } from "../vendor/js-yaml/js-yaml.esm.min.mjs";

/** True for a mapping of keys (not null, not a list). */
export const isMapping = (x) => x !== null && typeof x === "object" && !Array.isArray(x);

/** The value at dotted `path` of `doc`, or undefined. */
export function getPath(doc, path) {
  let node = doc;
  for (const key of path.split(".")) {
    if (!isMapping(node)) return undefined;
    node = node[key];
  }
  return node;
}

/** Set the value at `path` (creating mappings on the way); undefined deletes the key and any
 * mapping left empty by it. */
export function setPath(doc, path, value) {
  const keys = path.split(".");
  const chain = [doc];
  for (const key of keys.slice(0, -1)) {
    const parent = chain[chain.length - 1];
    if (!isMapping(parent[key])) {
      if (value === undefined) return;
      parent[key] = {};
    }
    chain.push(parent[key]);
  }
  const last = keys[keys.length - 1];
  if (value !== undefined) {
    chain[chain.length - 1][last] = value;
    return;
  }
  delete chain[chain.length - 1][last];
  for (let i = chain.length - 1; i > 0; i -= 1) {
    if (Object.keys(chain[i]).length) break;
    delete chain[i - 1][keys[i - 1]];
  }
}

/** The mapping of YAML `text`, read as the command line reads it (YAML 1.1, like PyYAML).
 * Throws an Error with `line` (1-based) when the text is not YAML or not a mapping. */
export function parseYaml(text) {
  let doc;
  try {
    doc = load(text, { schema: YAML11_SCHEMA });
  } catch (exc) {
    const error = new Error(String(exc.reason || exc.message).split("\n")[0]);
    error.line = exc.mark ? exc.mark.line + 1 : null;
    throw error;
  }
  if (!isMapping(doc)) {
    const error = new Error("the document must be a mapping of keys (version: 1, name: ..., ...)");
    error.line = 1;
    throw error;
  }
  return doc;
}

// Top-level keys written on one line, as the examples write them.
const ONE_LINE = new Set(["utilisation", "simulation", "workload"]);

/** `doc` with the keys of each mapping in the order `template` has them (new keys last). */
function orderedLike(doc, template) {
  if (!isMapping(doc) || !isMapping(template)) return doc;
  const keys = [
    ...Object.keys(template).filter((k) => k in doc),
    ...Object.keys(doc).filter((k) => !(k in template)),
  ];
  return Object.fromEntries(keys.map((k) => [k, orderedLike(doc[k], template[k])]));
}

/** YAML text of `doc`: a block for each section, one line for each distribution; keys in the
 * order of `template` (the document as last read), so a field cleared and typed again keeps its
 * place. */
export function toYaml(doc, template = null) {
  const ordered = orderedLike(doc, template);
  return Object.entries(ordered)
    .map(([key, value]) =>
      dump({ [key]: value }, { flowLevel: ONE_LINE.has(key) ? 1 : 2, lineWidth: -1, noRefs: true }),
    )
    .join("");
}

/** A copy of `doc` without null values (a stored run's scenario spells every default). */
export function withoutNulls(doc) {
  if (Array.isArray(doc)) return doc.map(withoutNulls);
  if (!isMapping(doc)) return doc;
  const out = {};
  for (const [key, value] of Object.entries(doc)) {
    if (value !== null) out[key] = withoutNulls(value);
  }
  return out;
}

/** The 1-based line of YAML `text` holding the key `path`, or of its deepest block ancestor
 * that is on a line of its own; null when none is. */
export function lineOfPath(text, path) {
  const wanted = path.split(".");
  const stack = [];
  let best = null;
  let bestDepth = 0;
  text.split("\n").forEach((line, index) => {
    const match = /^( *)([A-Za-z_][\w-]*)\s*:(\s|$)/.exec(line);
    if (!match) return;
    const indent = match[1].length;
    while (stack.length && stack[stack.length - 1].indent >= indent) stack.pop();
    stack.push({ indent, key: match[2] });
    const keys = stack.map((s) => s.key);
    const depth = keys.length;
    if (depth > bestDepth && keys.every((k, i) => wanted[i] === k)) {
      best = index + 1;
      bestDepth = depth;
    }
  });
  return best;
}

// --- multi-input fields ------------------------------------------------------------------

const NAMES = { uniform: "uniform", triangular: "triangular", pert: "PERT" };

function text(x) {
  return x === undefined || x === null ? "" : String(x);
}

/** What the inputs of a field of `kind` show for `value`: {parts, label, editable}. */
export function partsOf(kind, value) {
  if (kind === "uncertain") {
    if (value === undefined || value === null)
      return { parts: { low: "", mode: "", high: "" }, label: "default", editable: true };
    if (typeof value === "number")
      return { parts: { low: "", mode: text(value), high: "" }, label: "fixed", editable: true };
    if (isMapping(value) && value.dist in NAMES) {
      const parts = { low: text(value.low), mode: text(value.mode), high: text(value.high) };
      return { parts, label: NAMES[value.dist], editable: true, dist: value.dist };
    }
    const name = isMapping(value) ? `${value.dist || "other"} distribution` : "not a number";
    return {
      parts: { low: "", mode: "", high: "" },
      label: `${name}: edit it in the YAML`,
      editable: false,
    };
  }
  if (kind === "levels") {
    if (Array.isArray(value))
      return {
        parts: { start: "", stop: "", step: "" },
        label: `a list of ${value.length} levels (in the YAML); type here to use a range`,
        editable: true,
      };
    const v = isMapping(value) ? value : {};
    return {
      parts: { start: text(v.start), stop: text(v.stop), step: text(v.step) },
      label: isMapping(value) ? "" : "default",
      editable: true,
    };
  }
  if (kind === "counts") {
    const v = isMapping(value) ? value : {};
    return { parts: { min: text(v.min), max: text(v.max) }, label: "", editable: true };
  }
  throw new Error(`no parts for a field of kind ${kind}`);
}

/** A number typed in an input: undefined when empty; throws on anything else. */
export function parseNumber(raw) {
  const trimmed = raw.trim();
  if (trimmed === "") return undefined;
  const x = Number(trimmed);
  if (!Number.isFinite(x) || /^0x/i.test(trimmed)) {
    throw new Error(`${JSON.stringify(trimmed)} is not a number (write 1500 or 0.15)`);
  }
  return x;
}

/** Numbers typed in one input, separated by commas ("0.8, 1"): a list, undefined when empty;
 * throws on anything that is not a number. */
export function numbersOf(raw) {
  if (raw.trim() === "") return undefined;
  return raw.split(",").map((part) => {
    const x = parseNumber(part);
    if (x === undefined) throw new Error("an empty item: write numbers separated by commas");
    return x;
  });
}

const LEVELS = { start: 0.05, stop: 1.0, step: 0.05 };

/** The document value of a field of `kind` from its inputs' texts; `dist` is the distribution
 * the field held (a PERT stays PERT). Returns undefined for "the default"; throws on a value the
 * inputs cannot mean. */
export function valueOf(kind, raw, dist) {
  const n = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, parseNumber(v)]));
  if (kind === "uncertain") {
    const { low, mode, high } = n;
    if (low === undefined && high === undefined) return mode;
    if (low === undefined || high === undefined)
      throw new Error("give both low and high, or neither (likely alone is a fixed value)");
    if (mode === undefined) return low === high ? low : { dist: "uniform", low, high };
    if (low === mode && mode === high) return mode;
    return { dist: dist === "pert" ? "pert" : "triangular", low, mode, high };
  }
  if (kind === "levels") {
    if (Object.values(n).every((x) => x === undefined)) return undefined;
    return Object.fromEntries(
      Object.entries(LEVELS).map(([k, d]) => [k, n[k] === undefined ? d : n[k]]),
    );
  }
  if (kind === "counts") {
    if (n.min === undefined && n.max === undefined) return undefined;
    if (n.min === undefined || n.max === undefined) throw new Error("give both fewest and most");
    return { min: n.min, max: n.max };
  }
  throw new Error(`no value for a field of kind ${kind}`);
}
