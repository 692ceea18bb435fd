/* The context menu of tree and listing rows (right click, the Menu key or Shift+F10): the
 * same actions as the keyboard shortcuts, for one document, one folder or the selection.
 */
import { openMovePicker } from "./critiques.js";
import {
  clearSelection, createFolder, deleteDocuments, deleteFolder, ownFolder, renameDocument,
  renameFolder, takeOut,
} from "./manage.js";
import { openDocument, openFolder, refreshView } from "./panels.js";
import { reveal } from "./tree.js";
import { $, $$, esc, state } from "./util.js";

let items = [];
let returnFocus = null;

/** The actions on the row ``key`` ("d:12", "f:3"); none for proposals (they have buttons). */
export function actionsFor(key) {
  if (key.startsWith("d:")) {
    const id = Number(key.slice(2));
    const d = state.tree.docs.get(id);
    if (!d) return [];
    if (state.multi.size > 1 && state.multi.has(id)) {
      const ids = [...state.multi];
      return [
        { label: `Move ${ids.length} documents to…`, run: () => openMovePicker({ docs: ids }) },
        { label: `Delete ${ids.length} documents…`, run: () => deleteDocuments(ids), danger: true },
        { label: "Clear the selection", run: () => { clearSelection(); refreshView(); } },
      ];
    }
    const out = [
      { label: "Open", run: () => { reveal(id); openDocument(id); } },
      { label: "Rename…", run: () => renameDocument(d) },
      { label: "Move to…", run: () => openMovePicker({ docs: [id] }) },
    ];
    if (d.filed) out.push({ label: "Take out of folder", run: () => takeOut(d) });
    out.push({ label: "Delete…", run: () => deleteDocuments([id]), danger: true });
    return out;
  }
  const f = ownFolder(key);
  if (!f) return [];
  return [
    { label: "Open", run: () => { reveal(null, key); openFolder(key); } },
    { label: "New folder inside…", run: () => createFolder(f) },
    { label: "Rename…", run: () => renameFolder(f) },
    { label: "Move to…", run: () => openMovePicker({ folder: f }) },
    { label: "Delete…", run: () => deleteFolder(f), danger: true },
  ];
}

/** Open the menu for ``key`` at (x, y); focus goes back to ``from`` when it closes. */
export function openMenu(key, x, y, from) {
  items = actionsFor(key);
  if (!items.length) return false;
  const menu = $("#context-menu");
  menu.innerHTML = items.map((it, i) =>
    `<button type="button" role="menuitem" tabindex="-1" data-i="${i}" class="${it.danger ? "danger" : ""}">${esc(it.label)}</button>`).join("");
  menu.hidden = false;
  const width = menu.offsetWidth;
  const height = menu.offsetHeight;
  menu.style.left = `${Math.max(4, Math.min(x, window.innerWidth - width - 4))}px`;
  menu.style.top = `${Math.max(4, Math.min(y, window.innerHeight - height - 4))}px`;
  returnFocus = from || null;
  menu.firstElementChild.focus();
  return true;
}

export function closeMenu(restore = true) {
  const menu = $("#context-menu");
  if (menu.hidden) return;
  menu.hidden = true;
  if (restore && returnFocus && returnFocus.isConnected) returnFocus.focus();
  returnFocus = null;
}

/** The menu for a row, placed under it (for the keyboard). */
export function openMenuAtRow(node) {
  const rect = (node.firstElementChild || node).getBoundingClientRect();
  return openMenu(node.dataset.key, rect.left + 24, rect.bottom, node);
}

function run(i) {
  const item = items[i];
  closeMenu(false);
  if (item) item.run();
}

export function wireMenu() {
  const menu = $("#context-menu");
  menu.addEventListener("click", (ev) => {
    const b = ev.target.closest("[data-i]");
    if (b) run(Number(b.dataset.i));
  });
  menu.addEventListener("keydown", (ev) => {
    const buttons = $$("#context-menu [role=menuitem]");
    const i = buttons.indexOf(document.activeElement);
    const move = (j) => { ev.preventDefault(); buttons[(j + buttons.length) % buttons.length].focus(); };
    if (ev.key === "ArrowDown") move(i + 1);
    else if (ev.key === "ArrowUp") move(i - 1);
    else if (ev.key === "Home") move(0);
    else if (ev.key === "End") move(buttons.length - 1);
    else if (ev.key === "Escape" || ev.key === "Tab") { ev.preventDefault(); closeMenu(); }
  });
  document.addEventListener("mousedown", (ev) => { if (!menu.contains(ev.target)) closeMenu(false); });
  window.addEventListener("blur", () => closeMenu(false));
  // Right click on a row of the tree or of a folder listing.
  document.addEventListener("contextmenu", (ev) => {
    const row = ev.target.closest("#tree .node, #folder-view li[data-doc], #folder-view li[data-folder]");
    if (!row) return;
    const key = row.dataset.key || (row.dataset.doc ? `d:${row.dataset.doc}` : row.dataset.folder);
    const from = row.closest("#tree") ? row : null;
    if (openMenu(key, ev.clientX, ev.clientY, from)) ev.preventDefault();
  });
}
