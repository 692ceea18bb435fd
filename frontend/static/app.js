/* Foldwise browser UI: a file manager that makes suggestions.
 *
 * One page, plain JavaScript, no build step. The page talks to the JSON API with the session
 * cookie and the CSRF header; shapes are in docs/recluster.md and the API's /docs.
 * The tree is rendered from one model (state.tree) into HTML strings, and only expanded
 * folders render their children, so a 2,000-document tree draws in one pass.
 * Jobs are followed over server-sent events (GET /api/jobs/{id}/events), with polling as the
 * fallback.
 */
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({
  "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
}[c]));

const POLL_MS = 500;
const IDLE_CHECK_MS = 15000;
const PREVIEW_CHARS = 4000;
const STORE = "foldwise.view";

const state = {
  tree: null,            // the model built by buildTree()
  version: null,         // extended tree version shown
  expanded: new Set(),   // keys of expanded folders
  seenProposals: new Set(), // proposals already revealed once
  selected: null,        // key of the selected node
  openDoc: null,         // id of the document in the panel
  job: null,             // the job being watched {id, state, ...}
  jobTimer: null,
  jobStream: null,       // EventSource of the followed job
  sessionLost: false,
  timings: null,         // of the last loadTree(), in ms (the speed test reads them)
  question: null,
  hasRecluster: true,    // false when the recluster endpoints are not installed
};

/* ------------------------------------------------------------------ API */

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

function csrf() {
  const name = (window.FOLDWISE && window.FOLDWISE.csrfCookie) || "foldwise_csrf";
  const hit = document.cookie.split("; ").find((c) => c.startsWith(name + "="));
  return hit ? decodeURIComponent(hit.slice(name.length + 1)) : "";
}

function detailOf(body, status) {
  const d = body && body.detail;
  if (typeof d === "string") return d;
  if (Array.isArray(d)) {
    return d.map((e) => `${(e.loc || []).slice(1).join(".") || "input"}: ${e.msg}`).join("; ");
  }
  if (status >= 500) return `the server failed (error ${status}); try again, or tell your administrator`;
  return `the server answered ${status}`;
}

async function api(method, url, body) {
  const headers = { Accept: "application/json" };
  const opts = { method, headers, credentials: "same-origin" };
  if (method !== "GET") headers["X-CSRF-Token"] = csrf();
  if (body instanceof FormData) opts.body = body;
  else if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url, opts);
  } catch (err) {
    throw new ApiError(0, "cannot reach the server; check your connection");
  }
  if (res.status === 401) {
    sessionExpired();
    throw new ApiError(401, "your session has expired");
  }
  if (res.status === 204) return null;
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json().catch(() => null) : await res.text();
  if (!res.ok) throw new ApiError(res.status, detailOf(data, res.status));
  return data;
}

function sessionExpired() {
  if (state.sessionLost) return;
  state.sessionLost = true;
  stopJobWatch();
  const banner = $("#banner");
  banner.innerHTML = 'Your session has expired. <a href="/login?expired=1&next=/" id="relogin">Log in again</a> ' +
    "to keep working; nothing you did before was lost.";
  banner.hidden = false;
}

function toast(message, kind = "info") {
  const el = document.createElement("div");
  el.className = `toast ${kind}`;
  el.setAttribute("role", kind === "error" ? "alert" : "status");
  el.textContent = message;
  $("#toasts").append(el);
  setTimeout(() => el.remove(), kind === "error" ? 8000 : 3500);
}

function fail(err, what) {
  if (err instanceof ApiError && err.status === 401) return;
  toast(`${what}: ${err.message}`, "error");
}

/* ------------------------------------------------------------ tree model */

const folderKey = (id) => (typeof id === "string" ? `p:${id}` : `f:${id}`);
const docKey = (id) => `d:${id}`;

function emptyFolder(key, fields) {
  return { key, children: [], docs: [], total: 0, fresh: 0, ...fields };
}

/** Merge the person's folders (with titles) and the extended tree into one model. */
function buildTree(base, ext) {
  const folders = new Map();
  const docs = new Map();
  const roots = [];
  const walk = (node, parentKey) => {
    const f = emptyFolder(folderKey(node.id), {
      id: node.id, kind: "existing", name: node.name, parentKey, terms: [],
    });
    folders.set(f.key, f);
    for (const d of node.documents || []) {
      docs.set(d.id, { id: d.id, title: d.title, folderKey: f.key, filed: true });
    }
    for (const child of node.children || []) walk(child, f.key);
  };
  for (const node of base.folders) walk(node, null);
  for (const d of base.unfiled || []) {
    docs.set(d.id, { id: d.id, title: d.title, folderKey: null, filed: false });
  }
  if (ext) {
    for (const ef of ext.folders) {
      if (ef.kind !== "proposed") continue;
      folders.set(folderKey(ef.id), emptyFolder(folderKey(ef.id), {
        id: ef.id, kind: "proposed", name: ef.name, terms: ef.top_terms || [],
        parentKey: ef.parent_id == null ? null : folderKey(ef.parent_id),
        cohesion: ef.cohesion,
      }));
    }
    for (const p of ext.placements) {
      const d = docs.get(p.document_id);
      if (!d || d.filed) continue;
      d.folderKey = p.folder_id == null ? null : folderKey(p.folder_id);
      if (d.folderKey && !folders.has(d.folderKey)) d.folderKey = null;
      d.confidence = p.confidence;
      d.terms = p.terms || [];
      d.placed = true;
    }
  }
  // Unfiled documents outside every folder: placed at the top level because nothing fits,
  // or not seen by any tree version yet.
  const noFit = emptyFolder("n:", { id: null, kind: "unfiled", name: "No good place yet", terms: [] });
  const unfiled = emptyFolder("u:", { id: null, kind: "unfiled", name: "Not placed yet", terms: [] });
  for (const f of folders.values()) {
    const parent = f.parentKey && folders.get(f.parentKey);
    if (parent) parent.children.push(f);
    else { f.parentKey = null; roots.push(f); }
  }
  for (const d of docs.values()) {
    const f = d.folderKey && folders.get(d.folderKey);
    if (f) f.docs.push(d);
    else if (d.placed) { d.folderKey = "n:"; noFit.docs.push(d); }
    else { d.folderKey = "u:"; unfiled.docs.push(d); }
  }
  const byName = (a, b) => a.name.localeCompare(b.name);
  const docOrder = (a, b) => (a.filed === b.filed ? a.title.localeCompare(b.title) : a.filed ? 1 : -1);
  const count = (f) => {
    f.children.sort((a, b) => (a.kind === b.kind ? byName(a, b) : a.kind === "proposed" ? 1 : -1));
    f.docs.sort(docOrder);
    f.total = f.docs.length;
    f.fresh = f.docs.filter((d) => !d.filed).length;
    for (const c of f.children) { count(c); f.total += c.total; f.fresh += c.fresh; }
  };
  roots.sort((a, b) => (a.kind === b.kind ? byName(a, b) : a.kind === "proposed" ? 1 : -1));
  roots.forEach(count);
  for (const extra of [noFit, unfiled]) {
    if (extra.docs.length) { count(extra); roots.push(extra); folders.set(extra.key, extra); }
  }
  return { folders, docs, roots, version: ext ? ext.version : null, outdated: ext ? ext.outdated : false };
}

async function loadTree() {
  const started = performance.now();
  const extPromise = !state.hasRecluster ? Promise.resolve(null)
    : api("GET", "/api/tree/extended").catch((err) => {
      // Without the recluster service the page is still a file manager, minus suggestions.
      if (err.status === 404) state.hasRecluster = false;
      else fail(err, "Could not load suggestions");
      return null;
    });
  const [base, ext] = await Promise.all([api("GET", "/api/folders/tree?include_documents=true"), extPromise]);
  const fetched = performance.now();
  state.tree = buildTree(base, ext);
  state.version = state.tree.version;
  revealNewProposals();
  const built = performance.now();
  renderTree();
  void $("#tree").offsetHeight; // include layout in the figure
  const drawn = performance.now();
  state.timings = { fetch: fetched - started, build: built - fetched, render: drawn - built, total: drawn - started };
  return state.tree;
}

/** Open the folders that hold proposals the person has not seen yet (once per proposal). */
function revealNewProposals() {
  for (const f of state.tree.folders.values()) {
    if (f.kind !== "proposed" || state.seenProposals.has(f.key)) continue;
    state.seenProposals.add(f.key);
    let key = f.parentKey;
    while (key) {
      state.expanded.add(key);
      const parent = state.tree.folders.get(key);
      key = parent ? parent.parentKey : null;
    }
  }
}

/** Reload the tree after a change; errors become a message, never an unhandled rejection. */
async function refreshTree() {
  try {
    await loadTree();
    return true;
  } catch (err) {
    fail(err, "Could not reload your folders");
    return false;
  }
}

/* ------------------------------------------------------------ tree view */

function pct(x) { return `${Math.round(100 * x)}%`; }

function folderHtml(f, depth, out) {
  const open = state.expanded.has(f.key);
  const hasKids = f.children.length || f.docs.length;
  const cls = ["node", "folder", f.kind];
  if (f.pending) cls.push("pending");
  if (state.selected === f.key) cls.push("selected");
  const filed = f.total - f.fresh;
  const fresh = f.fresh ? `<span class="new" title="${f.fresh} suggested here, not filed yet">+${f.fresh}</span>` : "";
  const countText = filed || !f.fresh ? `${filed}${fresh ? " " : ""}${fresh}` : fresh;
  // A proposal gets a second line: its top terms and what the person can do with it.
  const bar = f.kind === "proposed"
    ? `<div class="proposal-bar" style="padding-left:${6 + depth * 16 + 35}px">` +
      `<span class="terms" title="top terms">${esc(f.terms.slice(0, 6).join(" · "))}</span>` +
      (f.pending ? '<span class="muted small">saving…</span>'
        : '<span class="proposal-actions"><button class="small act-accept" title="Make it a real folder">Accept</button>' +
          '<button class="small act-rename" title="Accept under another name">Rename</button>' +
          '<button class="small danger act-reject" title="Reject: its documents go to the parent folder">Reject</button></span>') +
      "</div>"
    : "";
  out.push(
    `<div class="${cls.join(" ")}" role="treeitem" data-key="${esc(f.key)}" aria-level="${depth + 1}"` +
      `${hasKids ? ` aria-expanded="${open}"` : ""} aria-selected="${state.selected === f.key}" tabindex="-1">` +
      `<div class="row" style="padding-left:${6 + depth * 16}px">` +
      `<span class="twisty">${hasKids ? (open ? "▾" : "▸") : ""}</span><span class="icon folder"></span>` +
      `<span class="name">${esc(f.name)}</span>` +
      `<span class="count" title="${filed} filed, ${f.fresh} suggested">${countText}</span></div>${bar}`,
  );
  if (open && hasKids) {
    out.push('<div role="group">');
    for (const c of f.children) folderHtml(c, depth + 1, out);
    for (const d of f.docs) docHtml(d, depth + 1, out);
    out.push("</div>");
  }
  out.push("</div>");
}

function docHtml(d, depth, out) {
  const cls = ["node", "doc"];
  if (!d.filed) cls.push("suggested");
  if (d.pending) cls.push("pending");
  if (state.selected === docKey(d.id)) cls.push("selected");
  const conf = !d.filed && d.confidence != null
    ? `<span class="conf${d.confidence < 0.5 ? " low" : ""}" title="confidence of this suggestion">${pct(d.confidence)}</span>` : "";
  out.push(
    `<div class="${cls.join(" ")}" role="treeitem" data-key="d:${d.id}" data-doc="${d.id}" draggable="true"` +
      ` aria-level="${depth + 1}" aria-selected="${state.selected === docKey(d.id)}" tabindex="-1">` +
      `<div class="row" style="padding-left:${6 + depth * 16 + 14}px"><span class="icon doc"></span>` +
      `<span class="name" title="${esc(d.title)}">${esc(d.title)}</span>${conf}</div></div>`,
  );
}

function renderTree() {
  const tree = $("#tree");
  const scroll = tree.scrollTop;
  const t = state.tree;
  if (!t.roots.length) {
    tree.innerHTML = '<p class="muted pad">No folders yet. Drop a zip of your folders on the page, or use “Add documents”.</p>';
  } else {
    const out = [];
    for (const f of t.roots) folderHtml(f, 0, out);
    tree.innerHTML = out.join("");
  }
  tree.scrollTop = scroll;
  const proposals = [...t.folders.values()].filter((f) => f.kind === "proposed").length;
  $("#tree-summary").textContent =
    `${t.docs.size} documents · ${proposals} proposed` + (t.version ? ` · v${t.version}` : "") +
    (t.outdated ? " · update due" : "");
  const sel = state.selected && tree.querySelector(`[data-key="${CSS.escape(state.selected)}"]`);
  if (sel) sel.tabIndex = 0;
  else if (tree.firstElementChild && tree.firstElementChild.dataset) tree.firstElementChild.tabIndex = 0;
  saveView();
}

function saveView() {
  try {
    sessionStorage.setItem(STORE, JSON.stringify({
      expanded: [...state.expanded], selected: state.selected, openDoc: state.openDoc,
      seen: [...state.seenProposals].slice(-500),
    }));
  } catch (_) { /* private mode: the view is simply not remembered */ }
}

function restoreView() {
  try {
    const v = JSON.parse(sessionStorage.getItem(STORE) || "{}");
    state.expanded = new Set(v.expanded || []);
    state.selected = v.selected || null;
    state.openDoc = v.openDoc || null;
    state.seenProposals = new Set(v.seen || []);
  } catch (_) { /* ignore */ }
}

function nodeOf(el) { return el && el.closest(".node"); }

function toggle(key, open) {
  const want = open ?? !state.expanded.has(key);
  if (want) state.expanded.add(key); else state.expanded.delete(key);
  renderTree();
  focusKey(key);
}

function focusKey(key) {
  const el = $(`#tree [data-key="${CSS.escape(key)}"]`);
  if (!el) return;
  $$("#tree [tabindex='0']").forEach((n) => { n.tabIndex = -1; });
  el.tabIndex = 0;
  el.focus({ preventScroll: true });
  el.firstElementChild.scrollIntoView({ block: "nearest" });
}

function select(key) {
  state.selected = key;
  $$("#tree .node.selected").forEach((n) => { n.classList.remove("selected"); n.setAttribute("aria-selected", "false"); });
  const el = $(`#tree [data-key="${CSS.escape(key)}"]`);
  if (el) { el.classList.add("selected"); el.setAttribute("aria-selected", "true"); }
  focusKey(key);
  saveView();
}

/** Expand the ancestors of a document so that it shows, then select it. */
function reveal(docId, folder) {
  const d = docId != null && state.tree && state.tree.docs.get(docId);
  if (!d && !folder) return;
  let key = d ? d.folderKey : state.tree.folders.get(folder) && state.tree.folders.get(folder).parentKey;
  while (key) {
    state.expanded.add(key);
    const f = state.tree.folders.get(key);
    key = f ? f.parentKey : null;
  }
  renderTree();
  select(d ? docKey(docId) : folder);
}

function onTreeClick(ev) {
  const node = nodeOf(ev.target);
  if (!node) return;
  const key = node.dataset.key;
  const f = state.tree.folders.get(key);
  if (ev.target.closest(".act-accept")) return acceptProposal(f);
  if (ev.target.closest(".act-reject")) return rejectProposal(f);
  if (ev.target.closest(".act-rename")) return startRename(f, node);
  if (ev.target.closest(".rename-input")) return;
  if (node.dataset.doc) {
    select(key);
    openDocument(Number(node.dataset.doc));
  } else {
    state.selected = key;
    toggle(key);
    openFolder(key);
  }
}

function onTreeKey(ev) {
  if (ev.target.closest("input")) return;
  const items = $$("#tree [role=treeitem]");
  const current = nodeOf(document.activeElement) || $("#tree [tabindex='0']") || items[0];
  if (!current) return;
  const i = items.indexOf(current);
  const key = current.dataset.key;
  const isFolder = !current.dataset.doc;
  const go = (el) => { if (el) { ev.preventDefault(); select(el.dataset.key); } };
  switch (ev.key) {
    case "ArrowDown": go(items[i + 1]); break;
    case "ArrowUp": go(items[i - 1]); break;
    case "Home": go(items[0]); break;
    case "End": go(items[items.length - 1]); break;
    case "ArrowRight":
      ev.preventDefault();
      if (isFolder && !state.expanded.has(key)) { state.selected = key; toggle(key, true); }
      else if (isFolder) go(items[i + 1] && items[i + 1].parentElement.closest(".node") === current ? items[i + 1] : null);
      break;
    case "ArrowLeft": {
      ev.preventDefault();
      if (isFolder && state.expanded.has(key)) { state.selected = key; toggle(key, false); }
      else go(current.parentElement.closest(".node"));
      break;
    }
    case "Enter":
    case " ":
      ev.preventDefault();
      if (isFolder) { state.selected = key; toggle(key); } else openDocument(Number(current.dataset.doc));
      break;
    case "m":
      if (!isFolder) { ev.preventDefault(); openMovePicker(Number(current.dataset.doc)); }
      break;
    default:
  }
}

/* ------------------------------------------------------ drag and drop */

let dragDoc = null;

function onDragStart(ev) {
  const node = nodeOf(ev.target);
  if (!node || !node.dataset.doc) return;
  dragDoc = Number(node.dataset.doc);
  ev.dataTransfer.setData("text/x-foldwise-document", String(dragDoc));
  ev.dataTransfer.effectAllowed = "move";
}

function dropFolder(ev) {
  const node = nodeOf(ev.target);
  if (!node || node.dataset.doc) return null;
  const f = state.tree.folders.get(node.dataset.key);
  return f && f.kind === "existing" ? { node, f } : null;
}

function onDragOver(ev) {
  if (dragDoc == null) return;
  const target = dropFolder(ev);
  $$("#tree .drop-target").forEach((n) => n.classList.remove("drop-target"));
  if (!target) return;
  ev.preventDefault();
  ev.dataTransfer.dropEffect = "move";
  target.node.classList.add("drop-target");
}

function onDrop(ev) {
  const target = dropFolder(ev);
  $$("#tree .drop-target").forEach((n) => n.classList.remove("drop-target"));
  const id = dragDoc;
  dragDoc = null;
  if (!target || id == null) return;
  ev.preventDefault();
  ev.stopPropagation();
  moveDocument(id, target.f.id);
}

/* ---------------------------------------------------------- critiques */

async function critique(body, what) {
  try {
    const out = await api("POST", "/api/critiques", body);
    refreshHistory();
    watchJobs();
    return out;
  } catch (err) {
    fail(err, what);
    return null;
  }
}

async function moveDocument(docId, folderId) {
  const t = state.tree;
  const d = t.docs.get(docId);
  const f = t.folders.get(folderKey(folderId));
  if (!d || !f || (d.filed && d.folderKey === f.key)) return;
  // Show the critique at once; the answer from the server confirms or reverts it.
  const before = { folderKey: d.folderKey, filed: d.filed };
  moveInModel(d, f.key, true);
  d.pending = true;
  state.expanded.add(f.key);
  renderTree();
  select(docKey(docId));
  const out = await critique({ kind: "move", document_id: docId, folder_id: folderId }, "Could not move the document");
  d.pending = false;
  if (!out) moveInModel(d, before.folderKey, before.filed);
  else toast(`Moved “${d.title}” to ${f.name}`);
  renderTree();
  if (state.openDoc === docId) openDocument(docId);
}

function moveInModel(d, key, filed) {
  const t = state.tree;
  const from = t.folders.get(d.folderKey);
  if (from) from.docs = from.docs.filter((x) => x !== d);
  const to = t.folders.get(key) || t.folders.get("u:");
  d.folderKey = to ? to.key : null;
  d.filed = filed;
  if (to) to.docs.unshift(d);
  recount();
}

function recount() {
  const count = (f) => {
    f.total = f.docs.length;
    f.fresh = f.docs.filter((d) => !d.filed).length;
    for (const c of f.children) { count(c); f.total += c.total; f.fresh += c.fresh; }
  };
  state.tree.roots.forEach(count);
}

async function acceptProposal(f, name) {
  if (!f || f.kind !== "proposed") return;
  f.pending = true;
  f.name = name || f.name;
  renderTree();
  const body = name ? { kind: "rename", proposal_id: f.id, name } : { kind: "accept", proposal_id: f.id };
  const out = await critique(body, name ? "Could not rename the folder" : "Could not accept the folder");
  if (out) {
    toast(`Folder “${f.name}” created`);
    await refreshTree();
    if (out.created_folder_id != null && state.selected === f.key) {
      state.selected = folderKey(out.created_folder_id);
      renderTree();
    }
    refreshView();
  } else {
    f.pending = false;
    renderTree();
  }
}

async function rejectProposal(f) {
  if (!f || f.kind !== "proposed") return;
  f.pending = true;
  renderTree();
  const out = await critique({ kind: "reject", proposal_id: f.id }, "Could not reject the folder");
  if (out) {
    toast(`Proposal “${f.name}” rejected`);
    await refreshTree();
    refreshView();
  } else {
    f.pending = false;
    renderTree();
  }
}

function startRename(f, node) {
  const name = node.querySelector(".name");
  const input = document.createElement("input");
  input.className = "rename-input";
  input.value = f.name;
  input.setAttribute("aria-label", "New folder name");
  name.replaceWith(input);
  input.focus();
  input.select();
  let done = false;
  const finish = (ok) => {
    if (done) return;
    done = true;
    const value = input.value.trim();
    if (ok && value) acceptProposal(f, value); else renderTree();
  };
  input.addEventListener("keydown", (ev) => {
    ev.stopPropagation();
    if (ev.key === "Enter") finish(true);
    if (ev.key === "Escape") finish(false);
  });
  input.addEventListener("blur", () => finish(false));
}

async function notInProposal(docId, proposalId) {
  const d = state.tree.docs.get(docId);
  if (d) { d.pending = true; renderTree(); }
  const out = await critique({ kind: "not_in", document_id: docId, proposal_id: proposalId },
    "Could not record that");
  if (out) {
    toast("Noted: it does not belong there");
    await refreshTree();
    openDocument(docId);
  } else if (d) {
    d.pending = false;
    renderTree();
  }
}

/* ------------------------------------------------------ move picker */

let moveFor = null;

function folderPaths() {
  const out = [];
  const walk = (f, prefix) => {
    if (f.kind !== "existing") return;
    const path = prefix ? `${prefix} / ${f.name}` : f.name;
    out.push({ id: f.id, path });
    f.children.forEach((c) => walk(c, path));
  };
  state.tree.roots.forEach((f) => walk(f, ""));
  return out;
}

function openMovePicker(docId) {
  moveFor = docId;
  const d = state.tree.docs.get(docId);
  $("#move-title").textContent = `Move “${d ? d.title : "document"}” to…`;
  $("#move-filter").value = "";
  fillMoveList("");
  $("#move-dialog").showModal();
  $("#move-filter").focus();
}

function fillMoveList(filter) {
  const f = filter.toLowerCase();
  const items = folderPaths().filter((p) => p.path.toLowerCase().includes(f));
  $("#move-list").innerHTML = items.length
    ? items.map((p, i) => `<li role="option" data-folder="${p.id}" class="${i === 0 ? "active" : ""}">${esc(p.path)}</li>`).join("")
    : '<li class="muted">No folder matches.</li>';
}

function pickMove(folderId) {
  $("#move-dialog").close();
  if (moveFor != null && folderId) moveDocument(moveFor, folderId);
}

/* ------------------------------------------------------ document panel */

function showView(id) {
  for (const v of $$("#content .view")) v.hidden = v.id !== id;
}

function folderLabel(key) {
  const names = [];
  let f = state.tree && state.tree.folders.get(key);
  while (f) { names.unshift(f.name); f = state.tree.folders.get(f.parentKey); }
  return names.join(" / ");
}

async function openDocument(id) {
  state.openDoc = id;
  saveView();
  const view = $("#doc-view");
  showView("doc-view");
  view.innerHTML = '<p class="muted">Loading…</p>';
  let doc;
  try {
    doc = await api("GET", `/api/documents/${id}`);
  } catch (err) {
    view.innerHTML = `<p class="error" role="alert">Could not open this document: ${esc(err.message)}</p>`;
    return;
  }
  if (state.openDoc !== id) return;
  const m = state.tree && state.tree.docs.get(id);
  const f = m && state.tree.folders.get(m.folderKey);
  let where;
  if (doc.folder_id != null) {
    where = `<div class="where" id="doc-where"><div>Filed in <span class="path">${esc(doc.folder_path || folderLabel(folderKey(doc.folder_id)))}</span>` +
      ' <span class="muted">— you put it there.</span></div></div>';
  } else if (m && m.placed && f && f.kind !== "unfiled") {
    const proposal = f.kind === "proposed";
    where = `<div class="where suggested" id="doc-where"><div>Foldwise suggests <span class="path">${esc(folderLabel(f.key))}</span>` +
      `${proposal ? ' <span class="muted">(a proposed new folder)</span>' : ""} ` +
      `<span class="conf">${pct(m.confidence)} confident</span></div>` +
      (m.terms && m.terms.length ? `<div class="muted small">because of the words</div><div class="chips">${m.terms.map((t) => `<span class="chip">${esc(t)}</span>`).join("")}</div>` : "") +
      '<div class="buttons">' +
      (proposal ? `<button id="not-in-btn" data-proposal="${esc(f.id)}">Doesn’t belong here</button>`
        : `<button id="accept-place-btn" class="primary" data-folder="${f.id}">File it here</button>`) +
      "</div></div>";
  } else if (m && m.placed) {
    where = '<div class="where suggested" id="doc-where">No folder fits it well yet. Use “Move to…” to file it: ' +
      "Foldwise learns from where you put it.</div>";
  } else {
    where = '<div class="where" id="doc-where">Not filed. Foldwise places it after the next recluster.</div>';
  }
  const text = doc.text.length > PREVIEW_CHARS ? `${doc.text.slice(0, PREVIEW_CHARS)}\n…` : doc.text;
  view.innerHTML =
    `<div class="doc-head"><h2 id="doc-title">${esc(doc.title)}</h2><div class="doc-actions">` +
    `<a class="btn" id="download-link" href="/api/documents/${doc.id}/file" download>Download original</a>` +
    '<button type="button" id="move-btn">Move to…</button></div></div>' +
    `<div class="doc-meta">${esc(doc.filename)} · ${esc(doc.media_type)} · ${(doc.size / 1024).toFixed(1)} KB</div>` +
    where +
    '<h3>Similar documents</h3><ul class="similar" id="similar"><li class="muted">Looking…</li></ul>' +
    `<h3>Text</h3><pre class="preview" id="doc-text">${esc(text)}</pre>`;
  $("#move-btn").onclick = () => openMovePicker(id);
  const notIn = $("#not-in-btn");
  if (notIn) notIn.onclick = () => notInProposal(id, notIn.dataset.proposal);
  const acceptPlace = $("#accept-place-btn");
  if (acceptPlace) acceptPlace.onclick = () => moveDocument(id, Number(acceptPlace.dataset.folder));
  loadSimilar(id);
}

/** Redraw what the main area shows after the tree changed (the same document or folder). */
function refreshView() {
  if (!$("#doc-view").hidden && state.openDoc) openDocument(state.openDoc);
  else if (!$("#folder-view").hidden) {
    if (state.selected && state.tree.folders.has(state.selected)) openFolder(state.selected);
    else showView("welcome");
  }
}

/** The folder's contents in the main area; for a proposal, what it is and what to do. */
function openFolder(key) {
  const f = state.tree && state.tree.folders.get(key);
  if (!f) return;
  state.openDoc = null;
  saveView();
  const view = $("#folder-view");
  showView("folder-view");
  const rows = f.docs.map((d) => `<li data-doc="${d.id}" class="${d.filed ? "" : "suggested"}">` +
    `<span class="icon doc"></span> ${esc(d.title)}` +
    (d.filed ? "" : ` <span class="conf">${d.confidence != null ? pct(d.confidence) : ""} suggested</span>`) + "</li>").join("");
  const subs = f.children.map((c) => `<li data-folder="${esc(c.key)}"><span class="icon folder"></span> ${esc(c.name)}` +
    ` <span class="muted small">${c.total}</span></li>`).join("");
  let head = "";
  if (f.kind === "proposed") {
    head = '<div class="where proposal-card" id="proposal-card"><div><strong>A new folder?</strong> ' +
      `Foldwise found ${f.total} documents that fit none of your folders well` +
      (f.parentKey ? ` inside <span class="path">${esc(folderLabel(f.parentKey))}</span>` : "") + ".</div>" +
      `<div class="chips">${f.terms.map((t) => `<span class="chip">${esc(t)}</span>`).join("")}</div>` +
      '<div class="buttons"><button class="primary" id="proposal-accept">Accept</button>' +
      '<button id="proposal-rename">Rename…</button><button class="danger" id="proposal-reject">Reject</button></div></div>';
  }
  view.innerHTML = `<h2 id="folder-title">${esc(f.kind === "proposed" ? f.name : folderLabel(key) || f.name)}</h2>` + head +
    (subs ? `<h3>Folders</h3><ul class="listing">${subs}</ul>` : "") +
    `<h3>Documents</h3>${rows ? `<ul class="listing">${rows}</ul>` : '<p class="muted">No documents directly in this folder.</p>'}`;
  if (f.kind === "proposed") {
    $("#proposal-accept").onclick = () => acceptProposal(f);
    $("#proposal-reject").onclick = () => rejectProposal(f);
    $("#proposal-rename").onclick = () => {
      const node = $(`#tree [data-key="${CSS.escape(key)}"]`);
      if (node) startRename(f, node);
    };
  }
}

async function loadSimilar(id) {
  const ul = $("#similar");
  try {
    const items = await api("GET", `/ui/api/documents/${id}/similar?limit=5`);
    if (state.openDoc !== id || !ul.isConnected) return;
    ul.innerHTML = items.length
      ? items.map((s) => `<li><a data-doc="${s.id}">${esc(s.title)}</a> <span class="muted small">${pct(s.similarity)}</span></li>`).join("")
      : '<li class="muted">None yet.</li>';
  } catch (err) {
    if (ul.isConnected) ul.innerHTML = `<li class="error">${esc(err.message)}</li>`;
  }
}

/* -------------------------------------------------------------- search */

/** "a / b" for a filed document, "suggested: a / b" for a placed one, else "unfiled". */
function whereLabel(docId, folderId) {
  if (folderId != null) return `<span class="muted small">${esc(folderLabel(folderKey(folderId)))}</span>`;
  const d = state.tree && state.tree.docs.get(docId);
  const f = d && d.placed && state.tree.folders.get(d.folderKey);
  if (f && f.kind !== "unfiled") {
    return `<span class="conf small">suggested: ${esc(folderLabel(f.key))}</span>`;
  }
  return '<span class="muted small">unfiled</span>';
}

let searchTimer = null;

async function runSearch(q) {
  const view = $("#search-view");
  if (!q.trim()) { showView(state.openDoc ? "doc-view" : "welcome"); return; }
  showView("search-view");
  try {
    const res = await api("GET", `/api/search?q=${encodeURIComponent(q)}&limit=50`);
    if ($("#search").value !== q) return;
    const mark = (s) => esc(s).replace(/\[([^\]]*)\]/g, "<mark>$1</mark>");
    view.innerHTML = `<h2>Search: “${esc(q)}”</h2>` + (res.hits.length
      ? `<ul class="hits" id="search-results">${res.hits.map((h) =>
        `<li data-doc="${h.id}"><div><strong>${esc(h.title)}</strong> ${whereLabel(h.id, h.folder_id)}</div>` +
        `<div class="snippet">${mark(h.snippet)}</div></li>`).join("")}</ul>`
      : '<p class="muted" id="search-empty">Nothing matches every word.</p>');
  } catch (err) {
    view.innerHTML = `<h2>Search</h2><p class="error" role="alert">${esc(err.message)}</p>`;
  }
}

/* ------------------------------------------------------ upload, import */

function resultRow(name) {
  const tr = document.createElement("tr");
  tr.innerHTML = `<td>${esc(name)}</td><td class="status uploading">uploading…</td><td class="detail"></td>`;
  $("#upload-results tbody").append(tr);
  $("#upload-results").hidden = false;
  return {
    set(status, detail) {
      const s = tr.querySelector(".status");
      s.className = `status ${status}`;
      s.textContent = status;
      tr.querySelector(".detail").textContent = detail || "";
      tr.dataset.status = status;
    },
  };
}

async function uploadFiles(files) {
  if (!files.length) return;
  showView("upload-view");
  let changed = false;
  for (const file of files) {
    const row = resultRow(file.name);
    const form = new FormData();
    form.append("file", file, file.name);
    try {
      if (/\.zip$/i.test(file.name)) {
        const r = await api("POST", "/api/import/zip", form);
        const skipped = r.skipped.length ? `; left out: ${r.skipped.join(", ")}` : "";
        row.set("imported", `${r.documents_created} documents in ${r.folders_created} new folders` +
          `${r.folders_reused ? ` (${r.folders_reused} existing)` : ""}` +
          `${r.duplicates ? `, ${r.duplicates} duplicates` : ""}${skipped}`);
        changed = true;
      } else {
        const r = await api("POST", "/api/documents/upload", form);
        if (r.duplicate) row.set("duplicate", `already stored as “${r.document.title}”`);
        else { row.set("stored", `“${r.document.title}”, unfiled: Foldwise will place it`); changed = true; }
      }
    } catch (err) {
      if (err.status === 401) { row.set("failed", "session expired"); break; }
      const rejected = [413, 415, 422].includes(err.status);
      row.set(rejected ? "rejected" : "failed", err.message);
    }
  }
  if (changed) {
    await refreshTree();
    if (state.hasRecluster) startRecluster(true);
  }
}

/* --------------------------------------------------------------- jobs */

async function startRecluster(quiet) {
  try {
    const job = await api("POST", "/api/recluster", {});
    showJob(job);
    followJob(job.id);
  } catch (err) {
    if (!quiet) fail(err, "Could not start a recluster");
    else watchJobs();
  }
}

function jobFraction(job) {
  const p = job.progress || {};
  if (job.state === "done") return 1;
  if (job.state === "queued") return 0.02;
  const runs = Math.max(p.r_max || 1, 1);
  const within = p.merges_total ? p.merges_done / p.merges_total : 0;
  const run = Math.max((p.run || 1) - 1, 0);
  return Math.min(0.98, Math.max(0.05, (run + within) / runs));
}

function showJob(job) {
  state.job = job;
  const box = $("#job");
  box.hidden = false;
  box.classList.toggle("failed", job.state === "failed");
  box.classList.toggle("done", job.state === "done");
  box.dataset.state = job.state;
  const frac = jobFraction(job);
  $("#job-bar").style.width = `${Math.round(frac * 100)}%`;
  $("#job-progress").setAttribute("aria-valuenow", String(Math.round(frac * 100)));
  const p = job.progress || {};
  let label;
  if (job.state === "queued") label = "Recluster queued…";
  else if (job.state === "running") {
    label = `Reclustering: ${p.phase || "working"}` + (p.r_max ? ` · run ${p.run || 1} of ${p.r_max}` : "");
  } else if (job.state === "done") label = "Tree updated";
  else if (job.state === "failed") label = `Recluster failed: ${job.error || "unknown error"}`;
  else label = "Recluster superseded by newer changes";
  $("#job-label").textContent = label;
  $("#job-label").title = label;
}

function stopJobWatch() {
  if (state.jobTimer) clearTimeout(state.jobTimer);
  state.jobTimer = null;
  if (state.jobStream) state.jobStream.close();
  state.jobStream = null;
}

/** Follow a job over server-sent events; fall back to polling if the stream fails. */
function followJob(id) {
  stopJobWatch();
  if (!window.EventSource) { pollJob(id); return; }
  const stream = new EventSource(`/api/jobs/${id}/events`);
  state.jobStream = stream;
  let ended = false;
  stream.addEventListener("progress", (ev) => showJob(JSON.parse(ev.data)));
  stream.addEventListener("end", (ev) => {
    ended = true;
    stopJobWatch();
    jobFinished(JSON.parse(ev.data));
  });
  // Polling also reports what a stream cannot say (an expired session, a vanished job).
  stream.onerror = () => { if (!ended && state.jobStream === stream) { stopJobWatch(); pollJob(id); } };
}

async function pollJob(id) {
  stopJobWatch();
  let job;
  try {
    job = await api("GET", `/api/jobs/${id}`);
  } catch (err) {
    if (err.status === 401) return;
    showJob({ id, state: "failed", error: err.message, progress: {} });
    return;
  }
  showJob(job);
  if (job.state === "queued" || job.state === "running") {
    state.jobTimer = setTimeout(() => pollJob(id), POLL_MS);
    return;
  }
  jobFinished(job);
}

async function jobFinished(job) {
  showJob(job);
  if (job.state === "done") {
    await refreshTree();
    refreshQuestion();
    refreshView();
    setTimeout(() => { if (state.job && state.job.id === job.id && state.job.state === "done") $("#job").hidden = true; }, 4000);
  }
  if (job.state === "stale") watchJobs();
}

/** Find the newest unfinished job (critiques and uploads start them in the background). */
async function watchJobs() {
  if (!state.hasRecluster) return;
  try {
    const page = await api("GET", "/api/jobs?limit=5");
    const live = page.items.find((j) => j.state === "queued" || j.state === "running");
    if (live) {
      if (!state.job || state.job.id !== live.id || !(state.jobStream || state.jobTimer)) { showJob(live); followJob(live.id); }
      return;
    }
    const last = page.items[0];
    if (last && last.result_version != null && last.result_version > (state.version || 0)) {
      await refreshTree();
      refreshView();
    }
    if (last && last.state === "failed" && (!state.job || state.job.id !== last.id)) showJob(last);
  } catch (err) {
    if (err.status === 404) return;
    fail(err, "Could not read the job list");
  }
}

/* ----------------------------------------------------------- questions */

async function refreshQuestion() {
  const panel = $("#panel-questions");
  let q = null;
  try {
    q = await api("GET", "/api/questions/closer");
  } catch (err) {
    if (err.status !== 404) { panel.innerHTML = `<p class="error">${esc(err.message)}</p>`; return; }
  }
  state.question = q;
  if (q && q.a && skipped.has(`${q.a.id}-${q.b.id}-${q.c.id}`)) q = null;
  if (!q || !q.a) {
    panel.innerHTML = '<p class="muted" id="no-question">No questions right now. When Foldwise hesitates between two places, it asks here.</p>';
    return;
  }
  const card = (d, cls) => `<div class="doc-card ${cls}"><strong>${esc(d.title)}</strong>` +
    ` <span class="link small" data-open="${d.id}" role="link" tabindex="0" title="Open in the main area">open</span>` +
    `<div class="muted small">${whereLabel(d.id, d.folder_id)}</div></div>`;
  panel.innerHTML =
    `<div class="question" id="closer-question"><h3>Which is closer?</h3>${card(q.a, "anchor")}` +
    '<p>is closer to…</p><div class="choices">' +
    `<button type="button" id="pick-b" data-pick="b">${card(q.b, "")}</button>` +
    `<button type="button" id="pick-c" data-pick="c">${card(q.c, "")}</button></div>` +
    `<p class="muted small">${esc(q.reason || "")}</p>` +
    '<button type="button" id="skip-question" class="link">Skip</button></div>';
  $("#pick-b").onclick = (ev) => { if (!ev.target.closest("[data-open]")) answerQuestion(q, q.b, q.c); };
  $("#pick-c").onclick = (ev) => { if (!ev.target.closest("[data-open]")) answerQuestion(q, q.c, q.b); };
  $("#skip-question").onclick = () => skipQuestion(q);
}

async function answerQuestion(q, closer, other) {
  $("#panel-questions").innerHTML = `<p class="muted">Thanks: “${esc(q.a.title)}” is closer to “${esc(closer.title)}”.</p>`;
  const out = await critique({ kind: "closer", a: q.a.id, b: closer.id, c: other.id }, "Could not record the answer");
  if (out) toast("Answer recorded");
  setTimeout(refreshQuestion, 600);
}

const skipped = new Set(JSON.parse(sessionStorage.getItem("foldwise.skipped") || "[]"));
async function skipQuestion(q) {
  skipped.add(`${q.a.id}-${q.b.id}-${q.c.id}`);
  try { sessionStorage.setItem("foldwise.skipped", JSON.stringify([...skipped].slice(-200))); } catch (_) { /* ignore */ }
  $("#panel-questions").innerHTML = '<p class="muted" id="no-question">Skipped. Another question comes with the next tree.</p>';
}

/* -------------------------------------------------------------- history */

const KIND_LABEL = {
  move: "Moved", accept: "Accepted folder", rename: "Accepted and renamed", reject: "Rejected folder",
  closer: "Closer", not_in: "Doesn’t belong",
};

function titleOf(id) {
  const d = state.tree && state.tree.docs.get(id);
  return d ? d.title : `document ${id}`;
}

function describe(c) {
  switch (c.kind) {
    case "move": return `“${titleOf(c.document_id)}” → ${folderLabel(folderKey(c.folder_id)) || `folder ${c.folder_id}`}`;
    case "accept": {
      const made = c.created_folder_id != null && folderLabel(folderKey(c.created_folder_id));
      return made ? `“${made}”` : c.name ? `“${c.name}”` : "a proposed folder";
    }
    case "rename": return `as “${c.name}”`;
    case "reject": return c.name ? `“${c.name}”` : "a proposed folder";
    case "closer": return `“${titleOf(c.a)}” is closer to “${titleOf(c.b)}” than to “${titleOf(c.c)}”`;
    case "not_in": return `“${titleOf(c.document_id)}” not in ${c.name ? `“${c.name}”` : "the proposed folder"}`;
    default: return c.kind;
  }
}

async function refreshHistory() {
  const panel = $("#panel-history");
  let items;
  try {
    const res = await api("GET", "/api/critiques?include_undone=true");
    items = Array.isArray(res) ? res : res.items || [];
  } catch (err) {
    panel.innerHTML = err.status === 404 ? '<p class="muted">No critiques yet.</p>'
      : `<p class="error">${esc(err.message)}</p>`;
    return;
  }
  if (!items.length) { panel.innerHTML = '<p class="muted" id="no-history">No critiques yet. Everything you correct shows here, with undo.</p>'; return; }
  panel.innerHTML = `<p class="muted small" id="triples-summary"></p><ul class="history" id="history-list">${items.map((c) => {
    const triples = (c.triples || []).slice(0, 6).map(([x, y, z]) =>
      `<li>${esc(titleOf(x))} closer to ${esc(titleOf(y))} than to ${esc(titleOf(z))}</li>`).join("");
    const more = c.triples && c.triples.length > 6 ? `<li>… ${c.triples.length - 6} more</li>` : "";
    const filed = c.filed_document_ids && c.filed_document_ids.length
      ? `<div class="muted small">${c.filed_document_ids.length} document(s) filed</div>` : "";
    return `<li class="${c.undone_at ? "undone" : ""}" data-critique="${c.id}"><div class="what">` +
      `<strong>${esc(KIND_LABEL[c.kind] || c.kind)}</strong><span>${esc(describe(c))}</span>` +
      (c.undone_at ? '<em class="muted small">undone</em>' : `<button class="small act-undo" data-id="${c.id}">Undo</button>`) +
      `</div><div class="when">${new Date(c.created_at).toLocaleString()} · by ${esc(c.author)} · tree v${c.tree_version}</div>` +
      filed + (triples ? `<ul class="triples">${triples}${more}</ul>` : "") + "</li>";
  }).join("")}</ul>`;
  summarizeTriples();
}

/** One line over the history: what the next recluster must respect. */
async function summarizeTriples() {
  try {
    const t = await api("GET", "/api/triples");
    const stated = t.triples.filter((x) => x.source === "critique").length;
    const inferred = t.triples.length - stated;
    const labeled = t.folders.reduce((n, f) => n + f.labeled_documents, 0);
    const el = $("#triples-summary");
    if (el) {
      el.textContent = `In force: ${stated} stated and ${inferred} inferred triple(s), ` +
        `and the order of your ${t.folders.length} folder(s) over ${labeled} filed document(s).`;
    }
  } catch (_) { /* the summary is optional */ }
}

async function undoCritique(id, button) {
  button.disabled = true;
  try {
    const out = await api("DELETE", `/api/critiques/${id}`);
    toast(out && out.notes && out.notes.length ? `Undone. ${out.notes.join(" ")}` : "Undone");
    await refreshTree();
    refreshHistory();
    watchJobs();
    refreshView();
  } catch (err) {
    button.disabled = false;
    fail(err, "Could not undo");
  }
}

/* -------------------------------------------------------------- quality */

async function refreshQuality() {
  const view = $("#quality-view");
  showView("quality-view");
  $("#panel-quality").innerHTML = '<p class="muted">The quality report is open in the main area.</p>' +
    '<button type="button" id="quality-refresh" class="small">Measure again</button>';
  $("#quality-refresh").onclick = refreshQuality;
  view.innerHTML = '<h2>How the tree compares with your folders</h2><p class="muted">Measuring…</p>';
  try {
    const html = await api("GET", "/ui/api/quality");
    view.innerHTML = `<h2>How the tree compares with your folders</h2>${html}`;
  } catch (err) {
    view.innerHTML = `<h2>Quality</h2><p class="error" role="alert">Could not measure: ${esc(err.message)}</p>`;
  }
}

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
  tree.addEventListener("dragend", () => { dragDoc = null; $$("#tree .drop-target").forEach((n) => n.classList.remove("drop-target")); });
  tree.addEventListener("focus", (ev) => {
    if (ev.target === tree) { const first = $("#tree [tabindex='0']"); if (first) first.focus(); }
  });

  $("#search").addEventListener("input", (ev) => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => runSearch(ev.target.value), 250);
  });
  $("#search-form").addEventListener("submit", (ev) => { ev.preventDefault(); runSearch($("#search").value); });
  $("#content").addEventListener("click", (ev) => {
    const sub = ev.target.closest("[data-folder]");
    if (sub && $("#folder-view").contains(sub)) {
      const key = sub.dataset.folder;
      reveal(null, key);
      openFolder(key);
      return;
    }
    const hit = ev.target.closest("[data-doc]");
    if (!hit || !$("#content").contains(hit)) return;
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
    if (ev.key === "Enter") {
      ev.preventDefault();
      const first = $("#move-list li[data-folder]");
      if (first) pickMove(Number(first.dataset.folder));
    }
  });
  $("#move-list").addEventListener("click", (ev) => {
    const li = ev.target.closest("li[data-folder]");
    if (li) pickMove(Number(li.dataset.folder));
  });
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
