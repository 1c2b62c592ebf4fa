// Saved runs: save the document of a view (POST /v1/runs), list them (GET /v1/runs), open one
// into its view, and download any report format (GET /v1/runs/<id>/report?format=...). A run
// with more work than the service answers at once is stored as a job (202): the view shows its
// progress while it polls the run, then its result as for any other run.

import { api, ApiError } from "./api.js";
import { withoutNulls } from "./doc.js";
import { fmtNumber, fmtUtilisation } from "./format.js";
import { el } from "./render.js";

const PAGE_SIZE = 20;
// Polling a job: the wait the service asks for (Retry-After), within these bounds [ms].
const POLL_MIN_MS = 250;
const POLL_MAX_MS = 5000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function pollDelay(response) {
  const seconds = Number(response.headers.get("Retry-After"));
  const ms = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1000;
  return Math.min(POLL_MAX_MS, Math.max(POLL_MIN_MS, ms));
}

/** How far a run is, in words: "queued", "running, 42 %", "failed", "done". */
export function stateOf(run) {
  if (run.status === "running") return `running, ${Math.floor(run.progress * 100)} %`;
  return run.status;
}

function when(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const two = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

function explain(exc) {
  if (exc instanceof ApiError && exc.status === 401)
    return "This service needs an API key: enter it at the top of the page.";
  return exc.message;
}

/** Download `response` as a file named by its Content-Disposition. */
async function saveResponse(response, fallback) {
  const header = response.headers.get("Content-Disposition") || "";
  const match = /filename="([^"]+)"/.exec(header);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = el("a", { href: url, download: match ? match[1] : fallback, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export class Runs {
  /** `root`: the runs <section>; `open(kind, run)` shows a stored run in its view. */
  constructor(root, open) {
    this.root = root;
    this.open = open;
    this.table = root.querySelector('[data-role="runs-table"]');
    this.body = this.table.querySelector("tbody");
    this.status = root.querySelector('[data-role="runs-status"]');
    this.format = root.querySelector('[data-role="format"]');
    this.more = root.querySelector('[data-action="more"]');
    this.page = 1;
    root.querySelector('[data-action="refresh"]').addEventListener("click", () => this.refresh());
    this.more.addEventListener("click", () => this.load(this.page + 1));
  }

  refresh() {
    return this.load(1);
  }

  async load(page) {
    this.status.textContent = "Loading saved runs\u2026";
    let list;
    try {
      list = await api(`/v1/runs?page=${page}&page_size=${PAGE_SIZE}`);
    } catch (exc) {
      this.status.textContent = `Saved runs cannot be listed: ${explain(exc)}`;
      return;
    }
    if (page === 1) this.body.replaceChildren();
    this.page = page;
    for (const run of list.items) this.body.append(this.row(run));
    this.more.hidden = page >= list.pages;
    this.table.hidden = list.total === 0;
    this.status.textContent =
      list.total === 0
        ? "No saved runs yet: save one with \u201cSave run\u201d."
        : `${fmtNumber(list.total)} saved run${list.total === 1 ? "" : "s"}, newest first.`;
  }

  row(run) {
    const name = run.name || run.id;
    const open = el(
      "button",
      { type: "button", class: "small", "aria-label": `Open ${name}` },
      "Open",
    );
    open.addEventListener("click", () => this.openRun(run.id));
    const report = el(
      "button",
      { type: "button", class: "small", "aria-label": `Download the report of ${name}` },
      "Report",
    );
    report.addEventListener("click", () => this.download(run.id, this.format.value));
    let be =
      run.breakeven_p50 === null || run.breakeven_p50 === undefined
        ? "\u2014"
        : fmtUtilisation(run.breakeven_p50);
    if (run.status !== "done") be = stateOf(run);
    return el(
      "tr",
      { "data-run": run.id },
      el("th", { scope: "row" }, name),
      el("td", {}, el("time", { datetime: run.created_at }, when(run.created_at))),
      el("td", { class: "num" }, be),
      el("td", { class: "num optional" }, fmtNumber(run.samples)),
      el("td", { class: "actions" }, open, " ", report),
    );
  }

  async openRun(id) {
    this.status.textContent = "Opening the run\u2026";
    try {
      const run = await api(`/v1/runs/${encodeURIComponent(id)}`);
      if (run.status === "failed") {
        this.status.textContent = `Run ${run.name || run.id} failed: ${run.error.message}`;
        return;
      }
      if (run.status !== "done") {
        this.status.textContent = `Run ${run.name || run.id} is ${stateOf(run)}: open it once it is done.`;
        return;
      }
      const kind = run.scenario.kind === "plan" ? "plan" : "scenario";
      this.open(kind, { id: run.id, document: withoutNulls(run.scenario), result: run.result });
      this.status.textContent = `Opened run ${run.name || run.id}.`;
    } catch (exc) {
      this.status.textContent = `The run cannot be opened: ${explain(exc)}`;
    }
  }

  /** Download run `id`'s report in `format`; returns false on failure (said in the status). */
  async download(id, format, status = this.status) {
    status.textContent = `Preparing the ${format} report\u2026`;
    try {
      const response = await api(
        `/v1/runs/${encodeURIComponent(id)}/report?format=${encodeURIComponent(format)}`,
        { raw: true },
      );
      await saveResponse(response, `run-${id.slice(0, 8)}.${format}`);
      status.textContent = `Downloaded the ${format} report.`;
      return true;
    } catch (exc) {
      status.textContent = `The report cannot be downloaded: ${explain(exc)}`;
      return false;
    }
  }

  /** Save `editor`'s document as a run; returns the run id, or null (said in `status`). A
   * job is followed until it is done; its result is then shown in the view. */
  async save(editor, status) {
    status.textContent = "Saving\u2026";
    const version = editor.version;
    try {
      const response = await api("/v1/runs", { method: "POST", body: editor.doc, raw: true });
      let run = await response.json();
      if (response.status === 202) {
        status.textContent = `Saved as run ${run.id}; it is evaluated as a job.`;
        this.refresh();
        run = await this.follow(editor.view, response, run);
        if (run.status === "failed") throw new ApiError(run.error.code, run.error);
        if (editor.version === version) editor.life.show(run.result);
      }
      editor.saved = { id: run.id, version };
      status.textContent =
        editor.version === version
          ? `Saved as run ${run.id}.`
          : `Saved as run ${run.id}; the document changed since (open the run to see its answer).`;
      this.refresh();
      return run.id;
    } catch (exc) {
      if (exc instanceof ApiError && exc.status === 422) editor.life.failed(exc);
      status.textContent = `Not saved: ${explain(exc)}`;
      return null;
    }
  }

  /** Poll the job of `response` (a 202 for `run`) at its Location until it is done or failed,
   * showing its progress in `view`; returns the run as it ended. */
  async follow(view, response, run) {
    const box = view.querySelector('[data-role="job"]');
    const bar = box.querySelector('[data-role="job-progress"]');
    const words = box.querySelector('[data-role="job-status"]');
    const location = response.headers.get("Location");
    let delay = pollDelay(response);
    box.hidden = false;
    view.dataset.job = run.status;
    try {
      while (run.status === "queued" || run.status === "running") {
        bar.value = run.progress;
        words.textContent = `Run ${run.id}: ${stateOf(run)}`;
        await sleep(delay);
        const polled = await api(location, { raw: true });
        delay = pollDelay(polled);
        run = await polled.json();
        view.dataset.job = run.status;
      }
    } finally {
      box.hidden = true;
    }
    return run;
  }

  /** Wire a view's buttons: save, download (saving first if the document changed), copy. */
  actions(view, editor) {
    const status = view.querySelector('[data-role="action-status"]');
    const format = view.querySelector('[data-role="format"]');
    view
      .querySelector('[data-action="save"]')
      .addEventListener("click", () => this.save(editor, status));
    view.querySelector('[data-action="download"]').addEventListener("click", async () => {
      const saved =
        editor.saved && editor.saved.version === editor.version
          ? editor.saved.id
          : await this.save(editor, status);
      if (saved) await this.download(saved, format.value, status);
    });
    view.querySelector('[data-action="copy"]').addEventListener("click", async () => {
      const text = editor.textarea.value;
      try {
        await navigator.clipboard.writeText(text);
      } catch {
        editor.textarea.select();
        if (!document.execCommand("copy")) {
          status.textContent =
            "Copying is not allowed here: the YAML is selected, copy it with the keyboard.";
          return;
        }
      }
      status.textContent = "The YAML is on the clipboard.";
    });
  }
}
