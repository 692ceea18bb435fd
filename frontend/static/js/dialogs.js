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
