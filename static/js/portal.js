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

  // The phone menu: a disclosure button for the navigation. Escape closes it and gives the
  // focus back to the button; so does moving the focus out of the header.
  function setUpMenu() {
    var button = document.querySelector(".menu-button[aria-controls]");
    var header = button && button.closest(".site-header");
    if (!header) {
      return;
    }
    function setOpen(open) {
      button.setAttribute("aria-expanded", open ? "true" : "false");
      header.classList.toggle("menu-open", open);
    }
    button.hidden = false;
    header.classList.add("has-menu");
    button.addEventListener("click", function () {
      setOpen(button.getAttribute("aria-expanded") !== "true");
    });
    header.addEventListener("keydown", function (event) {
      if (event.key === "Escape" && button.getAttribute("aria-expanded") === "true") {
        setOpen(false);
        button.focus();
      }
    });
    header.addEventListener("focusout", function (event) {
      if (event.relatedTarget && !header.contains(event.relatedTarget)) {
        setOpen(false);
      }
    });
  }

  document.addEventListener("DOMContentLoaded", setUpMenu);

  // Copy buttons: the clipboard when the browser allows it, otherwise the text is selected
  // so that Ctrl+C (or the platform's copy) finishes the job.
  function tell(button, message) {
    var status = document.getElementById(button.getAttribute("data-copy-status"));
    if (status) {
      status.textContent = message;
    }
  }

  // What the button says, in the page's language (data-say-*), English without it.
  var ENGLISH = { copied: "Copied.", select: "Selected: press Ctrl+C (⌘C on a Mac) to copy it." };
  function said(button, key) {
    return button.getAttribute("data-say-" + key) || ENGLISH[key];
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
    tell(button, copied ? said(button, "copied") : said(button, "select"));
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
      function () { tell(button, said(button, "copied")); },
      function () { selectForCopy(button, field); }
    );
  });
})();
