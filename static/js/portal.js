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
})();
