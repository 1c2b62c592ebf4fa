// The page's entry point: one editor per document view, the compare view, the tabs between
// views, the catalog for the selects, the API key and the saved runs.

import { api, apiKey, auth, setApiKey } from "./api.js";
import { parseYaml } from "./doc.js";
import { Editor } from "./editor.js";
import { Runs } from "./runs.js";
import * as compare from "./views/compare.js";
import * as plan from "./views/plan.js";
import * as scenario from "./views/scenario.js";

// The views, in the order of the tabs (api/web/views.py VIEWS), each a template
// web/_<id>.html and a module here. A view that edits one document gives the Editor its `kind`
// and `render(result, view)`; a view with inputs of its own (compare) exports `create(view)`,
// a controller with `loaded`, `start()` (the first time it is shown) and `schedule()`.
const VIEWS = { scenario, plan, compare };

const boot = JSON.parse(document.getElementById("boot").textContent);
const editors = {}; // the document views' Editors
const controllers = {}; // every view's: its Editor, or the controller of its own module
const tabs = [...document.querySelectorAll('[role="tab"]')];

function examples(kind) {
  return boot.examples.filter((e) => e.kind === kind);
}

function activate(id, { focus = false } = {}) {
  if (!VIEWS[id]) return;
  for (const tab of tabs) {
    const on = tab.dataset.view === id;
    tab.setAttribute("aria-selected", String(on));
    tab.tabIndex = on ? 0 : -1;
    document.getElementById(tab.getAttribute("aria-controls")).hidden = !on;
    if (on && focus) tab.focus();
  }
  if (location.hash !== `#${id}`) history.replaceState(null, "", `#${id}`);
  const editor = editors[id];
  if (!editor) {
    controllers[id].start();
  } else if (!editor.loaded) {
    const first = examples(id).find((e) => e.name === boot.defaults[id]) || examples(id)[0];
    editor.view.querySelector('[data-role="example"]').value = first.name;
    editor.loadText(first.text);
  }
}

function setupTabs() {
  tabs.forEach((tab, i) => {
    tab.addEventListener("click", () => activate(tab.dataset.view));
    tab.addEventListener("keydown", (event) => {
      const moves = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 };
      if (!(event.key in moves)) return;
      event.preventDefault();
      const next = tabs[(moves[event.key] + tabs.length) % tabs.length];
      activate(next.dataset.view, { focus: true });
    });
  });
}

function setupExamples(editor) {
  const select = editor.view.querySelector('[data-role="example"]');
  const example = () => examples(editor.kind).find((e) => e.name === select.value);
  select.addEventListener("change", () => {
    if (example()) editor.loadText(example().text);
  });
  // Text pasted or typed that is another document (another name) is no longer the example:
  // the selector says "(a saved run, or your own)". After the editor has read the text.
  editor.textarea.addEventListener("input", () => {
    if (example() && editor.doc.name !== parseYaml(example().text).name) select.value = "";
  });
}

function setupAuth(views, runs) {
  const box = document.getElementById("auth");
  const input = document.getElementById("api-key");
  const status = document.getElementById("api-key-status");
  input.value = apiKey();
  let timer = null;
  const use = () => {
    setApiKey(input.value.trim());
    box.classList.toggle("needed", !input.value.trim());
    status.textContent = input.value.trim()
      ? "The key is sent with each request."
      : "Enter the API key of this service.";
    for (const view of views) if (view.loaded) view.schedule();
    runs.refresh();
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(use, 400);
  });
  input.addEventListener("change", () => {
    clearTimeout(timer);
    use();
  });
  box.addEventListener("submit", (event) => {
    event.preventDefault();
    clearTimeout(timer);
    use();
  });
  auth.addEventListener("unauthorised", (event) => {
    box.hidden = false;
    box.classList.add("needed");
    status.textContent = apiKey()
      ? `The key was refused: ${event.detail.message}`
      : "This service needs an API key: enter it here to evaluate and save.";
  });
  if (boot.auth_required && !apiKey())
    status.textContent = "This service needs an API key: enter it here to evaluate and save.";
}

async function loadCatalog() {
  try {
    const [gpus, instances, models, offers, grids] = await Promise.all(
      ["gpus", "instances", "models", "api-offers", "grids"].map((rows) =>
        api(`/v1/catalog/${rows}`),
      ),
    );
    for (const editor of Object.values(editors))
      editor.setCatalog({
        gpus: gpus.items,
        instances: instances.items,
        models: models.items,
        offers: offers.items,
        grids: grids.items,
      });
  } catch (exc) {
    for (const editor of Object.values(editors))
      editor.life.setStatus(
        editor.view.dataset.status,
        `The catalog could not be loaded (${exc.message}).`,
      );
  }
}

function start() {
  const runs = new Runs(document.getElementById("runs"), (kind, run) => {
    activate(kind);
    const editor = editors[kind];
    editor.view.querySelector('[data-role="example"]').value = "";
    editor.loadDocument(run.document, run.result);
    editor.saved = { id: run.id, version: editor.version };
    editor.view.scrollIntoView({ block: "start" });
  });
  for (const [id, module] of Object.entries(VIEWS)) {
    const view = document.getElementById(`view-${id}`);
    if (module.create) {
      controllers[id] = module.create(view);
      continue;
    }
    const editor = new Editor(view, module.kind, module.render, boot.work);
    editors[id] = controllers[id] = editor;
    setupExamples(editor);
    runs.actions(view, editor);
  }
  const initial = examples(boot.initial.kind).find((e) => e.name === boot.initial.example);
  const first = editors[boot.initial.kind];
  first.view.querySelector('[data-role="example"]').value = initial.name;
  first.loadText(initial.text, boot.initial.result);
  setupTabs();
  setupAuth(Object.values(controllers), runs);
  const wanted = location.hash.slice(1);
  activate(VIEWS[wanted] ? wanted : boot.initial.kind);
  loadCatalog();
  runs.refresh();
  document.documentElement.dataset.ready = "true";
}

start();
