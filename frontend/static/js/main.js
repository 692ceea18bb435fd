/* Foldwise browser UI: a file manager that makes suggestions.
 *
 * Plain ES modules, no build step. Shapes of the API are in docs/recluster.md and /docs.
 * This module wires the page's events and loads the first tree.
 */
import { ApiError, api, fail } from "./api.js";
import { fillMoveList, moveActive, openMovePicker, pickMove } from "./critiques.js";
import { clearSelection, createFolder, deleteDocuments, ownFolder, toggleInSelection } from "./manage.js";
import { fileAllAbove, onInboxClick, openInbox, renderInbox } from "./inbox.js";
import { wireMenu } from "./menu.js";
import { startRecluster, watchJobs } from "./jobs.js";
import { onSearchInput, openDocument, openFolder, refreshView, runSearch, showPane, showView, uploadFiles } from "./panels.js";
import { refreshHistory, refreshQuality, refreshQuestion, undoCritique } from "./side.js";
import { buildTree, loadTree, onDragEnd, onDragOver, onDragStart, onDrop, onTreeClick, onTreeKey, renderTree, reveal } from "./tree.js";
import { $, $$, IDLE_CHECK_MS, STORE, esc, restoreView, state } from "./util.js";

/* ---------------------------------------------------------------- setup */

function selectTab(button) {
  for (const b of $$(".tabs button")) {
    const on = b === button;
    b.setAttribute("aria-selected", String(on));
    $(`#${b.dataset.panel}`).hidden = !on;
  }
  if (button.id === "tab-history") refreshHistory();
  if (button.id === "tab-quality") refreshQuality();
}

function wire() {
  const tree = $("#tree");
  tree.addEventListener("click", onTreeClick);
  tree.addEventListener("keydown", onTreeKey);
  tree.addEventListener("dragstart", onDragStart);
  tree.addEventListener("dragover", onDragOver);
  tree.addEventListener("drop", onDrop);
  tree.addEventListener("dragend", onDragEnd);
  tree.addEventListener("focus", (ev) => {
    if (ev.target === tree) { const first = $("#tree [tabindex='0']"); if (first) first.focus(); }
  });

  $("#search").addEventListener("input", onSearchInput);
  $("#search-form").addEventListener("submit", (ev) => { ev.preventDefault(); runSearch($("#search").value); });
  $("#content").addEventListener("click", (ev) => {
    if (ev.target.closest(".pick")) return; // a checkbox selects, it does not open
    const sub = ev.target.closest("[data-folder]");
    if (sub && $("#folder-view").contains(sub)) {
      const key = sub.dataset.folder;
      reveal(null, key);
      openFolder(key);
      return;
    }
    const hit = ev.target.closest("[data-doc]");
    if (!hit || !$("#content").contains(hit)) return;
    ev.preventDefault(); // similar documents are links to "#"
    const id = Number(hit.dataset.doc);
    reveal(id);
    openDocument(id);
  });

  $("#upload-btn").onclick = () => showView("upload-view");
  $("#dropzone").addEventListener("keydown", (ev) => { if (ev.key === "Enter") $("#file-input").click(); });
  $("#file-input").addEventListener("change", (ev) => { uploadFiles([...ev.target.files]); ev.target.value = ""; });
  const hasFiles = (ev) => ev.dataTransfer && [...ev.dataTransfer.types].includes("Files");
  document.addEventListener("dragover", (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    document.body.classList.add("dragging-files");
  });
  document.addEventListener("dragleave", (ev) => { if (!ev.relatedTarget) document.body.classList.remove("dragging-files"); });
  document.addEventListener("drop", (ev) => {
    if (!hasFiles(ev)) return;
    ev.preventDefault();
    document.body.classList.remove("dragging-files");
    uploadFiles([...ev.dataTransfer.files]);
  });

  $("#recluster-btn").onclick = () => startRecluster(false);
  $("#logout-btn").onclick = async () => {
    try { await api("POST", "/auth/logout"); } catch (_) { /* the session is gone either way */ }
    try { sessionStorage.removeItem(STORE); } catch (_) { /* ignore */ }
    window.location.href = "/login";
  };

  for (const b of $$(".tabs button")) b.onclick = () => selectTab(b);
  $("#panel-questions").addEventListener("click", (ev) => {
    const link = ev.target.closest("[data-open]");
    if (!link) return;
    const id = Number(link.dataset.open);
    reveal(id);
    openDocument(id);
  });
  $("#panel-history").addEventListener("click", (ev) => {
    const b = ev.target.closest(".act-undo");
    if (b) undoCritique(Number(b.dataset.id), b);
  });

  $("#move-filter").addEventListener("input", (ev) => fillMoveList(ev.target.value));
  $("#move-filter").addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") { ev.preventDefault(); moveActive(ev.key === "ArrowDown" ? 1 : -1); }
    if (ev.key === "Enter") {
      ev.preventDefault();
      const active = $("#move-list li.active[data-folder]");
      if (active) pickMove(active.dataset.folder);
    }
  });
  $("#move-list").addEventListener("click", (ev) => {
    const li = ev.target.closest("li[data-folder]");
    if (li) pickMove(li.dataset.folder);
  });

  wireMenu();
  // Rows of listings and search results open with Enter, like a click.
  $("#content").addEventListener("keydown", (ev) => {
    const row = ev.target.closest("li[data-doc][tabindex], li[data-folder][tabindex]");
    if (row && ev.target === row && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); row.click(); }
  });
  document.addEventListener("keydown", onShortcut);
  $("#shortcuts-btn").onclick = () => $("#shortcuts-dialog").showModal();
  showPane("tree");
  for (const b of $$("#pane-tabs button")) b.onclick = () => showPane(b.dataset.pane);
  $("#pane-back").onclick = () => showPane("tree");
  $("#inbox-btn").onclick = openInbox;
  $("#inbox-view").addEventListener("click", (ev) => onInboxClick(ev, {
    openDoc: (id) => { reveal(id); openDocument(id); },
    openProposal: (key) => { reveal(null, key); openFolder(key); },
  }));
  for (const id of ["#inbox-filter", "#inbox-sort", "#inbox-threshold"]) $(id).addEventListener("input", renderInbox);
  $("#inbox-sort").addEventListener("change", renderInbox);
  $("#inbox-file-all").onclick = fileAllAbove;
  $("#new-folder-btn").onclick = () => createFolder(ownFolder(state.openFolder));
  $("#sel-move").onclick = () => openMovePicker({ docs: [...state.multi] });
  $("#sel-delete").onclick = () => deleteDocuments([...state.multi]);
  $("#sel-clear").onclick = () => { clearSelection(); refreshView(); };
  $("#content").addEventListener("change", (ev) => {
    const box = ev.target.closest(".pick");
    if (box) toggleInSelection(Number(box.dataset.pick), box.checked);
  });
}

/** Page-wide keys (listed under "?"); never while typing or in a dialog. */
function onShortcut(ev) {
  if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.target.closest("input, textarea, select, dialog, [contenteditable], #context-menu")) return;
  const keys = {
    "?": () => $("#shortcuts-dialog").showModal(),
    "/": () => $("#search").focus(),
    i: () => { openInbox(); $("#inbox-filter").focus(); },
    t: () => { showPane("tree"); const row = $("#tree [tabindex='0']"); if (row) row.focus(); },
    n: () => createFolder(ownFolder(state.openFolder)),
    u: () => { showView("upload-view"); $("#dropzone").focus(); },
  };
  const run = keys[ev.key];
  if (run) { ev.preventDefault(); run(); }
}

async function main() {
  restoreView();
  wire();
  try {
    await loadTree();
  } catch (err) {
    $("#tree").innerHTML = `<p class="error pad" role="alert">Could not load your folders: ${esc(err.message)}</p>`;
    return;
  }
  if (state.openDoc && state.tree.docs.has(state.openDoc)) openDocument(state.openDoc);
  else refreshView(); // a view opened while the tree was loading (the inbox) is drawn now
  refreshQuestion();
  watchJobs();
  // Trees also change without this page (API uploads, another tab): look now and then.
  setInterval(() => {
    if (!state.jobTimer && !state.jobStream && !state.sessionLost && document.visibilityState === "visible") watchJobs();
  }, IDLE_CHECK_MS);
}

// Last line of defence: an API error nobody caught is still shown as a sentence.
window.addEventListener("unhandledrejection", (ev) => {
  if (ev.reason instanceof ApiError) {
    ev.preventDefault();
    fail(ev.reason, "Something went wrong");
  }
});

window.foldwise = { state, loadTree, renderTree, buildTree };
document.addEventListener("DOMContentLoaded", main);
