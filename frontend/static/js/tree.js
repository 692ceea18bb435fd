/* The tree: one model from the folders and the extended tree, drawn in one pass;
 * keyboard navigation and dragging documents onto folders.
 */
import { api, fail } from "./api.js";
import { acceptProposal, moveDocument, openMovePicker, rejectProposal, startRename } from "./critiques.js";
import {
  clearSelection, deleteDocuments, deleteFolder, moveDocuments, moveFolder, ownFolder, renameDocument,
  renameFolder, selectRange, toggleInSelection,
} from "./manage.js";
import { updateInboxCount } from "./inbox.js";
import { openMenuAtRow } from "./menu.js";
import { openDocument, openFolder } from "./panels.js";
import { $, $$, esc, pct, plural, saveView, state } from "./util.js";

/* ------------------------------------------------------------ tree model */

export const folderKey = (id) => (typeof id === "string" ? `p:${id}` : `f:${id}`);
export const docKey = (id) => `d:${id}`;

/** Whether proposal ``f`` holds proposed subfolders (accepting it makes them real too). */
export const hasProposedParts = (f) => f.children.some((c) => c.kind === "proposed");

export function emptyFolder(key, fields) {
  return { key, children: [], docs: [], total: 0, fresh: 0, ...fields };
}

/** Merge the person's folders (with titles) and the extended tree into one model. */
export function buildTree(base, ext) {
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
        // Nested in another proposal: it is accepted or rejected with that one.
        nested: typeof ef.parent_id === "string",
        cohesion: ef.cohesion,
      }));
    }
    for (const p of ext.placements) {
      const d = docs.get(p.document_id);
      if (!d || d.filed) continue;
      d.folderKey = p.folder_id == null ? null : folderKey(p.folder_id);
      if (d.folderKey && !folders.has(d.folderKey)) d.folderKey = null;
      // In a proposal the posterior is the mass of the existing folder it lies under (1 at
      // the top level), not a chance of belonging to the new folder: no figure beside the
      // document anywhere, only "under FOLDER" on its page (docs/ui.md).
      const inProposal = typeof p.folder_id === "string";
      d.confidence = inProposal ? null : p.confidence;
      d.underConfidence = inProposal ? p.confidence : null;
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

export async function loadTree() {
  const started = performance.now();
  const extPromise = api("GET", "/api/tree/extended").catch((err) => {
    // Without suggestions the page is still a file manager.
    fail(err, "Could not load suggestions");
    return null;
  });
  const sent = state.writesSent;
  const [base, ext] = await Promise.all([api("GET", "/api/folders/tree?include_documents=true"), extPromise]);
  const fetched = performance.now();
  if (state.tree && (state.writes > 0 || state.writesSent !== sent)) {
    // A change (a move shown at once, say) was in flight while this tree was read: the
    // answer may predate it, and drawing it would undo what the page already shows. Read
    // again once every change is answered.
    state.treeWanted = true;
    if (state.writes === 0) return loadTree();
    return state.tree;
  }
  state.treeWanted = false;
  state.tree = buildTree(base, ext);
  state.version = state.tree.version;
  revealNewProposals();
  // A name being typed (a recluster ended meanwhile) is not thrown away: the rename's end
  // draws this tree (critiques.js, startRename).
  if ($("#tree .rename-input")) return state.tree;
  const built = performance.now();
  renderTree();
  void $("#tree").offsetHeight; // include layout in the figure
  const drawn = performance.now();
  state.timings = { fetch: fetched - started, build: built - fetched, render: drawn - built, total: drawn - started };
  return state.tree;
}

document.addEventListener("foldwise:writes-settled", () => { if (state.treeWanted) refreshTree(); });

/** Open the folders that hold proposals the person has not seen yet (once per proposal). */
export function revealNewProposals() {
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
export async function refreshTree() {
  try {
    await loadTree();
    return true;
  } catch (err) {
    fail(err, "Could not reload your folders");
    return false;
  }
}

/* ------------------------------------------------------------ tree view */


export function folderHtml(f, depth, out) {
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
        // One short line: a big proposal holds a dozen of them (docs/ui.md).
        : f.nested ? '<span class="muted small nested-note" title="A subfolder of the proposal above: accept or reject that one">part of the proposal above</span>'
        : '<span class="proposal-actions"><button class="small act-accept" title="' +
          (hasProposedParts(f)
            ? "Make it a real folder, with its proposed subfolders (its page offers it as one folder too)"
            : "Make it a real folder") + '">Accept</button>' +
          '<button class="small act-rename" title="Accept under another name">Rename</button>' +
          '<button class="small danger act-reject" title="Reject: no folder is made; its documents stay unfiled">Reject</button></span>') +
      "</div>"
    : "";
  out.push(
    `<div class="${cls.join(" ")}" role="treeitem" data-key="${esc(f.key)}" aria-level="${depth + 1}"` +
      (f.kind === "existing" ? ' draggable="true"' : "") +
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

export function docHtml(d, depth, out) {
  const cls = ["node", "doc"];
  if (!d.filed) cls.push("suggested");
  if (d.pending) cls.push("pending");
  const picked = state.selected === docKey(d.id) || state.multi.has(d.id);
  if (picked) cls.push("selected");
  if (state.multi.has(d.id)) cls.push("checked");
  const conf = !d.filed && d.confidence != null
    ? `<span class="conf${d.confidence < 0.5 ? " low" : ""}" title="confidence of this suggestion">${pct(d.confidence)}</span>` : "";
  out.push(
    `<div class="${cls.join(" ")}" role="treeitem" data-key="d:${d.id}" data-doc="${d.id}" draggable="true"` +
      ` aria-level="${depth + 1}" aria-selected="${picked}" tabindex="-1">` +
      `<div class="row" style="padding-left:${6 + depth * 16 + 14}px"><span class="icon doc"></span>` +
      `<span class="name" title="${esc(d.title)}">${esc(d.title)}</span>${conf}</div></div>`,
  );
}

export function renderTree() {
  const tree = $("#tree");
  const scroll = tree.scrollTop;
  // Redrawing replaces every node: the one with the keyboard focus gets it back, or a
  // reload after a recluster would drop a keyboard user out of the tree.
  const active = document.activeElement;
  const focused = active && tree.contains(active) ? nodeOf(active) : null;
  const focusedKey = focused ? focused.dataset.key : null;
  const t = state.tree;
  // A tree must hold tree items: while there are none it is a plain region with a sentence.
  tree.setAttribute("role", t.roots.length ? "tree" : "region");
  if (t.roots.length) tree.setAttribute("aria-multiselectable", "true"); else tree.removeAttribute("aria-multiselectable");
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
    `${plural(t.docs.size, "document")} · ${plural(proposals, "proposed folder")}` +
    (t.outdated ? " · your latest changes are not in the suggestions yet" : "");
  for (const id of state.multi) if (!t.docs.has(id)) state.multi.delete(id);
  updateInboxCount();
  $("#selection-bar").hidden = state.multi.size === 0;
  $("#selection-count").textContent = `${state.multi.size} selected`;
  // Nothing to sort on an empty account: a recluster there could only fail.
  const recluster = $("#recluster-btn");
  recluster.disabled = t.docs.size === 0;
  recluster.title = t.docs.size ? "Recompute placements and proposals now"
    : "Add documents first: there is nothing to sort yet";
  const again = focusedKey && tree.querySelector(`[data-key="${CSS.escape(focusedKey)}"]`);
  const sel = state.selected && tree.querySelector(`[data-key="${CSS.escape(state.selected)}"]`);
  if (again) {
    again.tabIndex = 0;
    again.focus({ preventScroll: true });
  } else if (sel) sel.tabIndex = 0;
  else if (tree.firstElementChild && tree.firstElementChild.dataset) tree.firstElementChild.tabIndex = 0;
  saveView();
}

export function nodeOf(el) { return el && el.closest(".node"); }

export function toggle(key, open) {
  const want = open ?? !state.expanded.has(key);
  if (want) state.expanded.add(key); else state.expanded.delete(key);
  renderTree();
  focusKey(key);
}

export function focusKey(key) {
  const el = $(`#tree [data-key="${CSS.escape(key)}"]`);
  if (!el) return;
  $$("#tree [tabindex='0']").forEach((n) => { n.tabIndex = -1; });
  el.tabIndex = 0;
  el.focus({ preventScroll: true });
  el.firstElementChild.scrollIntoView({ block: "nearest" });
}

export function select(key) {
  state.selected = key;
  $$("#tree .node.selected").forEach((n) => { n.classList.remove("selected"); n.setAttribute("aria-selected", "false"); });
  const el = $(`#tree [data-key="${CSS.escape(key)}"]`);
  if (el) { el.classList.add("selected"); el.setAttribute("aria-selected", "true"); }
  focusKey(key);
  saveView();
}

/** Expand the ancestors of a document so that it shows, then select it. */
export function reveal(docId, folder) {
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

export function onTreeClick(ev) {
  const node = nodeOf(ev.target);
  if (!node) return;
  const key = node.dataset.key;
  const f = state.tree.folders.get(key);
  if (ev.target.closest(".act-accept")) return acceptProposal(f);
  if (ev.target.closest(".act-reject")) return rejectProposal(f);
  if (ev.target.closest(".act-rename")) return startRename(f, node);
  if (ev.target.closest(".rename-input")) return;
  if (node.dataset.doc) {
    const id = Number(node.dataset.doc);
    if (ev.ctrlKey || ev.metaKey) {
      // The document already open joins the selection, as in a file manager.
      if (!state.multi.size && state.openDoc != null && state.openDoc !== id) state.multi.add(state.openDoc);
      toggleInSelection(id);
      return;
    }
    if (ev.shiftKey) { selectRange(id, $$("#tree .node.doc")); return; }
    if (state.multi.size) clearSelection();
    state.anchor = id;
    select(key);
    openDocument(id);
  } else {
    // A click on the name opens the folder (as in a file manager); only the arrow closes it.
    const onTwisty = ev.target.closest(".twisty") && nodeOf(ev.target.closest(".twisty")) === node;
    state.selected = key;
    if (onTwisty) { toggle(key); return; }
    toggle(key, true);
    openFolder(key);
  }
}

export function onTreeKey(ev) {
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
      ev.preventDefault();
      // Enter opens (a folder: expanded and shown in the main area); Space toggles.
      if (isFolder) { state.selected = key; toggle(key, true); openFolder(key); } else openDocument(Number(current.dataset.doc));
      break;
    case " ":
      ev.preventDefault();
      if (isFolder) { state.selected = key; toggle(key); } else toggleInSelection(Number(current.dataset.doc));
      break;
    case "m": {
      const f = ownFolder(key);
      if (!isFolder) { ev.preventDefault(); openMovePicker({ docs: pickedDocs(current) }); }
      else if (f) { ev.preventDefault(); openMovePicker({ folder: f }); }
      break;
    }
    case "F2":
      ev.preventDefault();
      if (!isFolder) renameDocument(state.tree.docs.get(Number(current.dataset.doc)));
      else if (ownFolder(key)) renameFolder(ownFolder(key));
      break;
    case "Delete":
      ev.preventDefault();
      if (!isFolder) deleteDocuments(pickedDocs(current));
      else if (ownFolder(key)) deleteFolder(ownFolder(key));
      break;
    case "ContextMenu":
      ev.preventDefault();
      openMenuAtRow(current);
      break;
    case "F10":
      if (ev.shiftKey) { ev.preventDefault(); openMenuAtRow(current); }
      break;
    default:
  }
}

/** The documents a key press acts on: the selection if the row is in it, else the row. */
function pickedDocs(node) {
  const id = Number(node.dataset.doc);
  return state.multi.size > 1 && state.multi.has(id) ? [...state.multi] : [id];
}

/* ------------------------------------------------------ drag and drop */

let dragDoc = null;
let dragFolder = null;

export function onDragStart(ev) {
  const node = nodeOf(ev.target);
  if (!node) return;
  if (!node.dataset.doc) {
    dragFolder = ownFolder(node.dataset.key);
    if (!dragFolder) return;
    ev.dataTransfer.setData("text/x-foldwise-folder", String(dragFolder.id));
    ev.dataTransfer.effectAllowed = "move";
    return;
  }
  dragDoc = Number(node.dataset.doc);
  ev.dataTransfer.setData("text/x-foldwise-document", String(dragDoc));
  ev.dataTransfer.effectAllowed = "move";
}

/** Whether folder ``key`` is ``ancestor`` or inside it (a folder cannot go into itself). */
function within(key, ancestor) {
  for (let k = key; k; k = state.tree.folders.get(k) && state.tree.folders.get(k).parentKey) {
    if (k === ancestor) return true;
  }
  return false;
}

export function dropFolder(ev) {
  const node = nodeOf(ev.target);
  if (!node || node.dataset.doc) return null;
  const f = state.tree.folders.get(node.dataset.key);
  if (!f || f.kind !== "existing") return null;
  if (dragFolder && (within(f.key, dragFolder.key) || f.key === dragFolder.parentKey)) return null;
  return { node, f };
}

export function onDragOver(ev) {
  if (dragDoc == null && !dragFolder) return;
  const target = dropFolder(ev);
  $$("#tree .drop-target").forEach((n) => n.classList.remove("drop-target"));
  if (!target) return;
  ev.preventDefault();
  ev.dataTransfer.dropEffect = "move";
  target.node.classList.add("drop-target");
}

export function onDragEnd() {
  dragDoc = null;
  dragFolder = null;
  $$("#tree .drop-target").forEach((n) => n.classList.remove("drop-target"));
}

export function onDrop(ev) {
  const target = dropFolder(ev);
  $$("#tree .drop-target").forEach((n) => n.classList.remove("drop-target"));
  const id = dragDoc;
  const folder = dragFolder;
  dragDoc = null;
  dragFolder = null;
  if (!target || (id == null && !folder)) return;
  ev.preventDefault();
  ev.stopPropagation();
  if (folder) moveFolder(folder, target.f.id);
  else if (state.multi.size > 1 && state.multi.has(id)) moveDocuments([...state.multi], target.f.id);
  else moveDocument(id, target.f.id);
}
