/* Questions the page asks before an action that is hard to take back: the person reads
 * what will happen and says yes or no (docs/ui.md, "No traps").
 */
import { $ } from "./util.js";

/** Show the confirm dialog; resolves to true when the person chose ``ok``. */
export function ask({ title, text, ok = "OK", danger = false }) {
  const dialog = $("#confirm-dialog");
  $("#confirm-title").textContent = title;
  $("#confirm-text").textContent = text;
  const okButton = $("#confirm-ok");
  okButton.textContent = ok;
  okButton.classList.toggle("danger-fill", danger);
  dialog.returnValue = "";
  dialog.showModal();
  // A destructive answer is never the default: Enter right away cancels.
  (danger ? $("#confirm-cancel") : okButton).focus();
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
  });
}

/** Ask for a name (a new folder, a new title); resolves to the trimmed name, or null. */
export function askName({ title, label = "Name", value = "", ok = "Save" }) {
  const dialog = $("#name-dialog");
  const input = $("#name-input");
  const error = $("#name-error");
  $("#name-title").textContent = title;
  $("#name-label").textContent = label;
  $("#name-ok").textContent = ok;
  input.value = value;
  error.hidden = true;
  dialog.showModal();
  input.focus();
  input.select();
  return new Promise((resolve) => {
    const finish = (answer) => {
      input.removeEventListener("keydown", onKey);
      $("#name-ok").onclick = null;
      $("#name-cancel").onclick = null;
      dialog.removeEventListener("cancel", onCancel);
      dialog.close();
      resolve(answer);
    };
    const submit = () => {
      const name = input.value.trim();
      if (!name) { error.textContent = "Please type a name."; error.hidden = false; input.focus(); return; }
      finish(name);
    };
    const onKey = (ev) => { if (ev.key === "Enter") { ev.preventDefault(); submit(); } };
    const onCancel = (ev) => { ev.preventDefault(); finish(null); };
    input.addEventListener("keydown", onKey);
    dialog.addEventListener("cancel", onCancel);
    $("#name-ok").onclick = submit;
    $("#name-cancel").onclick = () => finish(null);
  });
}
