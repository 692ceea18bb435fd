/* The person's own tree: create, rename, move and delete folders; rename, delete and take
 * documents out of folders; act on a multiple selection. Every change of place goes through
 * the API's filing routes (checked like a critique, in the history, undoable); each action
 * ends with a message carrying Undo, or asks first when it cannot be undone (docs/ui.md,
 * "Managing your tree").
 */
import { api, fail, toast } from "./api.js";
import { critique } from "./critiques.js";
import { ask, askName } from "./dialogs.js";
import { watchJobs } from "./jobs.js";
import { allDocs, refreshView } from "./panels.js";
import { offerUndo, refreshHistory } from "./side.js";
import { folderKey, refreshTree, renderTree } from "./tree.js";
import { plural, state } from "./util.js";

/* ------------------------------------------------------------ helpers */

/** After a change: the tree, the main area, the history and the coming recluster. */
async function changed() {
  await refreshTree();
  refreshView();
  refreshHistory();
  watchJobs();
}

/** The history entry a filing route just made (those routes answer with the document or
 * folder, not the critique): the newest one of ``kind``. */
export async function latestCritique(kind) {
  try {
    const [newest] = await api("GET", "/api/critiques?limit=1");
    return newest && newest.kind === kind ? newest.id : null;
  } catch (_) {
    return null;
  }
}

function offer(message, critiqueId) {
  if (critiqueId != null) offerUndo(message, critiqueId); else toast(message);
}

/** The existing folder a key names, or null (proposals and the unfiled groups are not). */
export function ownFolder(key) {
  const f = state.tree && state.tree.folders.get(key);
  return f && f.kind === "existing" ? f : null;
}

/* ------------------------------------------------------------ folders */

/** A new folder inside ``parent`` (an existing folder) or at the top level. */
export async function createFolder(parent) {
  const name = await askName({
    title: parent ? `New folder in “${parent.name}”` : "New folder", ok: "Create",
  });
  if (!name) return;
  try {
    const made = await api("POST", "/api/folders", { name, parent_id: parent ? parent.id : null });
    if (parent) state.expanded.add(parent.key);
    state.selected = folderKey(made.id);
    toast(`Folder “${made.name}” created`, "info", {
      label: "Undo", run: () => removeEmptyFolder(made.id, made.name),
    });
    await changed();
  } catch (err) {
    fail(err, "Could not create the folder");
  }
}

async function removeEmptyFolder(id, name) {
  try {
    await api("DELETE", `/api/folders/${id}`);
    toast(`Folder “${name}” removed`);
    await changed();
  } catch (err) {
    fail(err, "Could not remove the folder");
  }
}

export async function renameFolder(f) {
  const name = await askName({ title: `Rename the folder “${f.name}”`, value: f.name });
  if (!name || name === f.name) return;
  await setFolderName(f.id, f.name, name);
}

async function setFolderName(id, before, name) {
  try {
    await api("PATCH", `/api/folders/${id}`, { name });
    toast(`Folder renamed to “${name}”`, "info", {
      label: "Undo", run: () => setFolderName(id, name, before),
    });
    await changed();
  } catch (err) {
    fail(err, "Could not rename the folder");
  }
}

/** Move folder ``f`` into ``parentId`` (null: the top level). */
export async function moveFolder(f, parentId) {
  if (!f || f.id === parentId) return;
  try {
    await api("PATCH", `/api/folders/${f.id}`, { parent_id: parentId });
    const to = parentId == null ? "the top level" : `“${state.tree.folders.get(folderKey(parentId)).name}”`;
    if (parentId != null) state.expanded.add(folderKey(parentId));
    offer(`Moved the folder “${f.name}” to ${to}`, await latestCritique("folder_move"));
    await changed();
  } catch (err) {
    fail(err, "Could not move the folder");
  }
}

/** What deleting a folder does, said before: its documents are kept, unfiled. */
export function deleteFolderQuestion(f) {
  const docs = allDocs(f).filter((d) => d.filed).length;
  const subs = [];
  const walk = (x) => x.children.forEach((c) => { if (c.kind === "existing") { subs.push(c); walk(c); } });
  walk(f);
  const parts = [];
  if (subs.length) parts.push(`It holds ${plural(subs.length, "subfolder")}, deleted with it.`);
  parts.push(docs
    ? `Its ${plural(docs, "document")} ${docs === 1 ? "is" : "are"} kept: ${docs === 1 ? "it becomes" : "they become"} unfiled, and Foldwise suggests places for ${docs === 1 ? "it" : "them"}.`
    : "It holds no documents.");
  parts.push("You can undo this.");
  return {
    title: `Delete the folder “${f.name}”?`, text: parts.join(" "), ok: "Delete folder", danger: true,
    recursive: subs.length > 0,
  };
}

export async function deleteFolder(f) {
  const question = deleteFolderQuestion(f);
  if (!(await ask(question))) return;
  try {
    const out = await api("DELETE", `/api/folders/${f.id}?recursive=${question.recursive}`);
    if (state.openFolder === f.key) state.openFolder = null;
    offer(`Deleted the folder “${f.name}”; ${plural(out.documents_unfiled, "document")} unfiled`,
      await latestCritique("folder_delete"));
    await changed();
  } catch (err) {
    fail(err, "Could not delete the folder");
  }
}

/* ---------------------------------------------------------- documents */

export async function renameDocument(d) {
  const title = await askName({ title: "Rename the document", label: "Title", value: d.title });
  if (!title || title === d.title) return;
  await setTitle(d.id, d.title, title);
}

async function setTitle(id, before, title) {
  try {
    await api("PATCH", `/api/documents/${id}`, { title });
    toast(`Renamed to “${title}”`, "info", { label: "Undo", run: () => setTitle(id, title, before) });
    await changed();
  } catch (err) {
    fail(err, "Could not rename the document");
  }
}

/** Take a filed document out of its folder: unfiled, Foldwise suggests a place again. */
export async function takeOut(d) {
  if (!d.filed) return;
  try {
    await api("PATCH", `/api/documents/${d.id}`, { folder_id: null });
    offer(`Took “${d.title}” out of its folder`, await latestCritique("move"));
    await changed();
  } catch (err) {
    fail(err, "Could not take the document out");
  }
}

/** Delete documents for good, after saying so (a deleted document cannot come back). */
export async function deleteDocuments(ids) {
  const docs = ids.map((id) => state.tree.docs.get(id)).filter(Boolean);
  if (!docs.length) return;
  const one = docs.length === 1;
  const ok = await ask({
    title: one ? `Delete “${docs[0].title}”?` : `Delete ${docs.length} documents?`,
    text: `${one ? "The document, its file and its text are" : "These documents, their files and their text are"} ` +
      "removed for good: this cannot be undone. To keep a document but unfile it, use “Take out of folder”.",
    ok: one ? "Delete document" : `Delete ${docs.length} documents`,
    danger: true,
  });
  if (!ok) return;
  let deleted = 0;
  for (const d of docs) {
    try {
      await api("DELETE", `/api/documents/${d.id}`);
      deleted += 1;
      state.multi.delete(d.id);
      if (state.openDoc === d.id) state.openDoc = null;
    } catch (err) {
      fail(err, `Could not delete “${d.title}”`);
    }
  }
  if (deleted) toast(one ? `Deleted “${docs[0].title}”` : `Deleted ${plural(deleted, "document")}`);
  await changed();
}

/** File several documents in one folder: one critique each, undone together. */
export async function moveDocuments(ids, folderId) {
  const f = state.tree.folders.get(folderKey(folderId));
  if (f) state.expanded.add(f.key);
  await fileEach(ids.map((id) => [id, folderId]), `to ${f ? f.name : "the folder"}`);
}

/** File [document id, folder id] pairs: one critique each, one message, one Undo for all. */
export async function fileEach(pairs, where = "where Foldwise suggested") {
  const done = [];
  for (const [id, folderId] of pairs) {
    const out = await critique({ kind: "move", document_id: id, folder_id: folderId }, "Could not file a document");
    if (out) done.push(out.id);
  }
  state.multi.clear();
  if (done.length) {
    toast(`Filed ${plural(done.length, "document")} ${where}`, "info", {
      label: "Undo", run: () => undoAll(done),
    });
  }
  await changed();
}

async function undoAll(critiqueIds) {
  try {
    for (const id of critiqueIds.slice().reverse()) await api("DELETE", `/api/critiques/${id}`);
    toast("Undone");
  } catch (err) {
    fail(err, "Could not undo");
  }
  await changed();
}

/** Undo an upload: the documents it stored (never duplicates, which were there before) go. */
export async function removeUploaded(ids) {
  let removed = 0;
  for (const id of ids) {
    try {
      await api("DELETE", `/api/documents/${id}`);
      removed += 1;
    } catch (err) {
      if (err.status !== 404) fail(err, "Could not remove a document");
    }
  }
  toast(`Removed ${plural(removed, "added document")}`);
  await changed();
}

/* ---------------------------------------------------------- selection */

/** Ctrl/Cmd-click, Shift-click and the listing's checkboxes select several documents. */
export function toggleInSelection(id, on) {
  const want = on ?? !state.multi.has(id);
  if (want) state.multi.add(id); else state.multi.delete(id);
  state.anchor = id;
  renderTree();
}

/** Select the documents shown in the tree between the last one picked and ``id``. */
export function selectRange(id, rows) {
  const ids = rows.map((el) => Number(el.dataset.doc));
  const from = ids.indexOf(state.anchor ?? id);
  const to = ids.indexOf(id);
  if (from < 0 || to < 0) { toggleInSelection(id, true); return; }
  for (const x of ids.slice(Math.min(from, to), Math.max(from, to) + 1)) state.multi.add(x);
  renderTree();
}

export function clearSelection() {
  state.multi.clear();
  renderTree();
}
