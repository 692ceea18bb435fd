/* Critiques made in the tree and the document panel, shown at once and confirmed
 * (or reverted) by the server; the "Move to..." picker.
 */
import { api, fail } from "./api.js";
import { ask } from "./dialogs.js";
import { moveDocuments, moveFolder } from "./manage.js";
import { watchJobs } from "./jobs.js";
import { openDocument, proposalGone, refreshView } from "./panels.js";
import { offerUndo, refreshHistory } from "./side.js";
import { docKey, folderKey, refreshTree, renderTree, select } from "./tree.js";
import { $, esc, state } from "./util.js";

/* ---------------------------------------------------------- critiques */

export async function critique(body, what) {
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

export async function moveDocument(docId, folderId) {
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
  else offerUndo(`Moved “${d.title}” to ${f.name}`, out.id);
  renderTree();
  refreshView();
  if (out) document.dispatchEvent(new CustomEvent("foldwise:moved", { detail: { docIds: [docId] } }));
}

export function moveInModel(d, key, filed) {
  const t = state.tree;
  const from = t.folders.get(d.folderKey);
  if (from) from.docs = from.docs.filter((x) => x !== d);
  const to = t.folders.get(key) || t.folders.get("u:");
  d.folderKey = to ? to.key : null;
  d.filed = filed;
  if (to) to.docs.unshift(d);
  recount();
}

export function recount() {
  const count = (f) => {
    f.total = f.docs.length;
    f.fresh = f.docs.filter((d) => !d.filed).length;
    for (const c of f.children) { count(c); f.total += c.total; f.fresh += c.fresh; }
  };
  state.tree.roots.forEach(count);
}

/** Accept proposal ``f`` (as ``name`` if given). ``undivided``: one folder holds all its
 * documents, and the proposals nested in it are not made subfolders. */
export async function acceptProposal(f, name, undivided = false) {
  if (!f || f.kind !== "proposed" || f.nested) return;
  f.pending = true;
  f.name = name || f.name;
  renderTree();
  const body = name ? { kind: "rename", proposal_id: f.id, name } : { kind: "accept", proposal_id: f.id };
  if (undivided) body.subfolders = false;
  const out = await critique(body, name ? "Could not rename the folder" : "Could not accept the folder");
  if (out) {
    offerUndo(`Folder “${f.name}” created`, out.id);
    await refreshTree();
    if (out.created_folder_id != null && state.selected === f.key) {
      state.selected = folderKey(out.created_folder_id);
      renderTree();
    }
    // The accepted proposal, if open, is followed to the folder it became.
    if (out.created_folder_id != null && state.openFolder === f.key) state.openFolder = folderKey(out.created_folder_id);
    refreshView();
  } else {
    f.pending = false;
    renderTree();
  }
}

/** What rejecting does, said before it is done: it files nothing (issue 7). */
export function rejectQuestion(f) {
  const n = f.total;
  return {
    title: `Reject the proposed folder “${f.name}”?`,
    text: `No folder is made and nothing is filed: ${n === 1 ? "its document stays" : `its ${n} documents stay`} ` +
      "unfiled, and Foldwise suggests places for them among your own folders. " +
      "Foldwise will not propose them together again. You can undo this.",
    ok: "Reject",
    danger: true,
  };
}

export async function rejectProposal(f) {
  if (!f || f.kind !== "proposed" || f.nested) return;
  if (!(await ask(rejectQuestion(f)))) return;
  f.pending = true;
  renderTree();
  const out = await critique({ kind: "reject", proposal_id: f.id }, "Could not reject the folder");
  if (out) {
    offerUndo(`Proposal “${f.name}” rejected: its documents stay unfiled`, out.id);
    const wasOpen = state.openProposal && state.openProposal.key === f.key;
    await refreshTree();
    if (wasOpen) proposalGone(`You rejected the proposed folder “${f.name}”. Its documents stay unfiled; ` +
      "Foldwise suggests places for them among your folders.");
    else refreshView();
  } else {
    f.pending = false;
    renderTree();
  }
}

export function startRename(f, node) {
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

export async function notInProposal(docId, proposalId) {
  const d = state.tree.docs.get(docId);
  if (d) { d.pending = true; renderTree(); }
  const out = await critique({ kind: "not_in", document_id: docId, proposal_id: proposalId },
    "Could not record that");
  if (out) {
    offerUndo("Noted: it does not belong there", out.id);
    await refreshTree();
    openDocument(docId);
  } else if (d) {
    d.pending = false;
    renderTree();
  }
}

/* ------------------------------------------------------ move picker */

/** What the picker moves: {docs: [ids]} or {folder: f}. */
let moveFor = null;

/** Every folder of the person's own, with its path; ``skip`` leaves out a subtree. */
export function folderPaths(skip = null) {
  const out = [];
  const walk = (f, prefix) => {
    if (f.kind !== "existing" || f.key === skip) return;
    const path = prefix ? `${prefix} / ${f.name}` : f.name;
    out.push({ id: f.id, path });
    f.children.forEach((c) => walk(c, path));
  };
  state.tree.roots.forEach((f) => walk(f, ""));
  return out;
}

/** Open "Move to…" for documents ({docs: [ids]}, or one id) or a folder ({folder: f}). */
export function openMovePicker(what) {
  moveFor = typeof what === "number" ? { docs: [what] } : what;
  let title;
  if (moveFor.folder) title = `Move the folder “${moveFor.folder.name}” to…`;
  else if (moveFor.docs.length > 1) title = `Move ${moveFor.docs.length} documents to…`;
  else {
    const d = state.tree.docs.get(moveFor.docs[0]);
    title = `Move “${d ? d.title : "document"}” to…`;
  }
  $("#move-title").textContent = title;
  $("#move-filter").value = "";
  fillMoveList("");
  $("#move-dialog").showModal();
  $("#move-filter").focus();
}

export function fillMoveList(filter) {
  const f = filter.toLowerCase();
  const folder = moveFor && moveFor.folder;
  let items = folderPaths(folder ? folder.key : null);
  if (folder) items = [{ id: "top", path: "Top level" }, ...items];
  items = items.filter((p) => p.path.toLowerCase().includes(f));
  $("#move-list").innerHTML = items.length
    ? items.map((p, i) => `<li role="option" id="move-opt-${p.id}" data-folder="${p.id}" aria-selected="${i === 0}" class="${i === 0 ? "active" : ""}">${esc(p.path)}</li>`).join("")
    : '<li class="muted">No folder matches.</li>';
  markActive($("#move-list li.active"));
}

/** Arrow keys in the filter move the highlighted folder; Enter picks it. */
export function moveActive(step) {
  const options = [...document.querySelectorAll("#move-list li[data-folder]")];
  if (!options.length) return;
  const i = options.findIndex((li) => li.classList.contains("active"));
  markActive(options[Math.max(0, Math.min(options.length - 1, i + step))]);
}

function markActive(li) {
  for (const x of document.querySelectorAll("#move-list li")) {
    x.classList.toggle("active", x === li);
    x.setAttribute("aria-selected", String(x === li));
  }
  const filter = $("#move-filter");
  if (li) { filter.setAttribute("aria-activedescendant", li.id); li.scrollIntoView({ block: "nearest" }); }
  else filter.removeAttribute("aria-activedescendant");
}

export function pickMove(value) {
  $("#move-dialog").close();
  if (!moveFor || value == null || value === "") return;
  const target = value === "top" ? null : Number(value);
  if (moveFor.folder) moveFolder(moveFor.folder, target);
  else if (target == null) return;
  else if (moveFor.docs.length === 1) moveDocument(moveFor.docs[0], target);
  else moveDocuments(moveFor.docs, target);
}
