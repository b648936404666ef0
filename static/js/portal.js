// Small behaviours that the Content-Security-Policy keeps out of inline attributes.
(function () {
  "use strict";

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-dismiss='toast']");
    if (button) {
      button.closest(".toast").remove();
    }
  });

  // Toasts that are not errors leave by themselves; errors stay until dismissed.
  document.addEventListener("htmx:afterSwap", function () {
    document.querySelectorAll("#toasts .toast:not(.toast-error):not([data-timed])")
      .forEach(function (toast) {
        toast.setAttribute("data-timed", "");
        setTimeout(function () { toast.remove(); }, 8000);
      });
  });

  // A refused form comes back with a summary of what to fix; keyboard and screen reader
  // users start there instead of at the top of the page. Each summary takes focus once, so
  // a later swap (a live preview) never pulls the reader away from the field being fixed.
  function focusErrorSummary() {
    var summary = document.querySelector("[data-error-summary]:not([data-focused])");
    if (summary) {
      summary.setAttribute("data-focused", "");
      summary.focus();
    }
  }

  document.addEventListener("DOMContentLoaded", focusErrorSummary);
  document.addEventListener("htmx:afterSwap", focusErrorSummary);

  // Copy buttons: the clipboard when the browser allows it, otherwise the text is selected
  // so that Ctrl+C (or the platform's copy) finishes the job.
  function tell(button, message) {
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    if (status) {
      status.textContent = message;
    }
  }

  function selectForCopy(button, field) {
    field.focus();
    field.select();
    var copied = false;
    try {
      copied = document.execCommand("copy");
    } catch (error) {
      copied = false;
    }
    tell(button, copied ? "Copied." : "Selected: press Ctrl+C (⌘C on a Mac) to copy it.");
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy-target]");
    var field = button && document.getElementById(button.getAttribute("data-copy-target"));
    if (!field) {
      return;
    }
    if (!navigator.clipboard || !window.isSecureContext) {
      selectForCopy(button, field);
      return;
    }
    navigator.clipboard.writeText(field.value).then(
      function () { tell(button, "Copied."); },
      function () { selectForCopy(button, field); }
    );
  });
})();
