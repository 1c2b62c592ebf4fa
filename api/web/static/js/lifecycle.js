// One view's request lifecycle, shared by the document editor and the compare view. An edit
// schedules a request DEBOUNCE_MS later (a newer edit restarts the wait); a newer request
// aborts the one under way, so the latest edit wins; the outcome is shown: the answer, the
// API's errors beside the fields their paths name (and listed under the answer), or why the
// service did not answer.
//
// The view's element carries the state, for the stylesheet, scripts and tests:
//   data-status    pending (waiting for the typing to stop), busy, idle, invalid or error;
//   data-busy      "true" from an edit until its outcome is shown (or the edit is refused);
//   data-sent      how many requests the view has sent;
//   data-answered  the number (1, 2, ...) of the request whose outcome is shown.

import { api, ApiError } from "./api.js";
import { el } from "./render.js";

export const DEBOUNCE_MS = 300;

/** An API error that asks for less work than the service answers at once. */
const tooMuchWork = (error) => error.message.includes("(COSTMODEL_MAX_WORK)");

/** A field of a view's form, found by its container's data-path. */
export class Field {
  constructor(root) {
    this.root = root;
    this.path = root.dataset.path;
    this.kind = root.dataset.kind;
    this.parts = Object.fromEntries(
      [...root.querySelectorAll("[data-part]")].map((i) => [i.dataset.part, i]),
    );
    this.input = root.querySelector("[data-input]");
    this.error = root.querySelector('[data-role="error"]');
    this.dist = root.querySelector('[data-role="dist"]');
    this.distName = undefined;
  }

  get controls() {
    return [this.input, ...Object.values(this.parts)].filter(Boolean);
  }

  /** True when `path` (an API error path) is this field or inside it. */
  owns(path) {
    return (
      path === this.path || path.startsWith(`${this.path}.`) || path.startsWith(`${this.path}[`)
    );
  }

  setError(messages) {
    const text = messages.join("; ");
    this.error.textContent = text;
    this.error.hidden = !text;
    this.root.classList.toggle("invalid", Boolean(text));
    for (const c of this.controls) {
      if (text) c.setAttribute("aria-invalid", "true");
      else c.removeAttribute("aria-invalid");
    }
  }
}

export class Lifecycle {
  /**
   * `view`: the view's <section> (its status, problems and results by data-role);
   * `fields`: its Fields;
   * `request()`: {path, body} of the request the view's inputs make now;
   * `show(result)`: draw an answer, returning the status line ("Up to date: ...");
   * `words`: {working: "Evaluating…", earlier: "an earlier document", valid: "the last valid
   *   scenario", job: what to say when only a job (a saved run) can evaluate it, if one can};
   * `blocked()`: why nothing can be sent besides the fields' own errors (or null);
   * `unplaced(errors)`: show the API errors no field owns (the problems list shows all).
   */
  constructor(view, { fields, request, show, words, blocked = () => null, unplaced = () => {} }) {
    this.view = view;
    this.fields = fields;
    this.request = request;
    this.draw = show;
    this.words = words;
    this.blocked = blocked;
    this.unplaced = unplaced;
    const q = (role) => view.querySelector(`[data-role="${role}"]`);
    this.status = q("status");
    this.problems = q("problems");
    this.results = q("results");
    this.fieldErrors = new Map(); // the page's own: text that is not a number, a part missing
    this.timer = null;
    this.controller = null;
    this.sent = 0;
    this.mark({ busy: false, sent: 0, answered: 0 });
  }

  mark(state) {
    for (const [key, value] of Object.entries(state)) this.view.dataset[key] = String(value);
  }

  // --- the page's own errors --------------------------------------------------------------

  /** `field`'s text cannot be sent (`message` says why): shown beside it, nothing is sent. */
  refuse(field, message) {
    this.fieldErrors.set(field.path, message);
    field.setError([message]);
    this.halt(`${field.path}: ${message}`);
  }

  /** `field`'s text can be sent: the error it showed (the page's or the API's) is gone. */
  accept(field) {
    this.fieldErrors.delete(field.path);
    field.setError([]);
  }

  /** Forget the page's own errors (the whole document was read anew). */
  clearFieldErrors() {
    for (const field of this.fields) if (this.fieldErrors.has(field.path)) field.setError([]);
    this.fieldErrors.clear();
  }

  /** Nothing is sent until the next edit; `message` says why. */
  halt(message) {
    this.abort();
    this.setStatus("invalid", message);
  }

  // --- requests ---------------------------------------------------------------------------

  abort() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.controller) this.controller.abort();
    this.controller = null;
    this.mark({ busy: false });
  }

  /** Send the request DEBOUNCE_MS after the last edit; a request under way is aborted. */
  schedule() {
    this.abort();
    const [first] = this.fieldErrors.entries();
    const why = this.blocked() || (first ? `${first[0]}: ${first[1]}` : null);
    if (why) {
      this.setStatus("invalid", why);
      return;
    }
    this.mark({ busy: true });
    this.setStatus("pending", this.words.working);
    this.timer = setTimeout(() => this.evaluate(), DEBOUNCE_MS);
  }

  /** Send the request now; its outcome is shown unless a newer one was sent meanwhile. */
  async evaluate() {
    this.abort();
    const controller = new AbortController();
    this.controller = controller;
    this.sent += 1;
    const number = this.sent;
    this.mark({ busy: true, sent: number });
    this.setStatus("busy", this.words.working);
    const { path, body } = this.request();
    let result;
    let failure = null;
    try {
      result = await api(path, { method: "POST", body, signal: controller.signal });
    } catch (exc) {
      failure = exc;
    }
    if (controller.signal.aborted || this.controller !== controller) return; // overtaken
    this.controller = null;
    if (failure) this.failed(failure);
    else this.show(result);
    this.mark({ busy: false, answered: number });
  }

  /** Show `result` (an answer, requested here or stored with a run). */
  show(result) {
    this.showErrors([]);
    this.results.classList.remove("stale");
    this.setStatus("idle", this.draw(result));
  }

  /** Show why the request failed: the API's errors beside their fields, or no answer. */
  failed(exc) {
    this.results.classList.add("stale");
    if (!(exc instanceof ApiError)) {
      this.setStatus(
        "error",
        `The service did not answer (${exc.message}); the answer shown is for ${this.words.earlier}.`,
      );
      return;
    }
    if (exc.status === 401) {
      this.setStatus("error", "This service needs an API key: enter it at the top of the page.");
      return;
    }
    const errors = exc.errors.length ? exc.errors : [{ path: "", message: exc.message }];
    this.showErrors(errors);
    if (this.words.job && exc.message.includes("/v1/runs") && errors.every(tooMuchWork)) {
      this.setStatus("invalid", this.words.job);
      return;
    }
    const count = `${errors.length} problem${errors.length === 1 ? "" : "s"}`;
    this.setStatus(
      "invalid",
      `${count} to fix (shown beside the inputs); the answer shown is for ${this.words.valid}.`,
    );
  }

  // --- errors and status ------------------------------------------------------------------

  /** Each API error beside the innermost field its path names, every one in the list under
   * the answer; those no field owns go to `unplaced`. */
  showErrors(errors) {
    const byField = new Map();
    const rest = [];
    for (const error of errors) {
      const path = String(error.path || "");
      const owners = this.fields.filter((f) => path && f.owns(path));
      const field = owners.sort((a, b) => b.path.length - a.path.length)[0];
      if (!field) {
        rest.push(error);
        continue;
      }
      if (!byField.has(field)) byField.set(field, []);
      const inner = path === field.path ? "" : `${path.slice(field.path.length + 1)}: `;
      byField.get(field).push(inner + error.message);
    }
    for (const field of this.fields) {
      if (!this.fieldErrors.has(field.path)) field.setError(byField.get(field) || []);
    }
    this.unplaced(rest);
    this.problems.replaceChildren();
    this.problems.hidden = !errors.length;
    if (errors.length) {
      this.problems.append(
        el(
          "ul",
          {},
          ...errors.map((e) => el("li", {}, e.path ? `${e.path}: ${e.message}` : e.message)),
        ),
      );
    }
  }

  setStatus(state, text) {
    this.view.dataset.status = state;
    this.results.setAttribute("aria-busy", String(state === "busy" || state === "pending"));
    this.status.textContent = text;
  }
}
