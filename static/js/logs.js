// Keeps a live log scrolled to its newest line, unless the reader has scrolled up to read.
(function () {
  "use strict";
  var SLACK = 40;

  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    var log = event.target;
    if (log.matches && log.matches("pre.log[data-follow]")) {
      var atBottom = log.scrollHeight - log.scrollTop - log.clientHeight < SLACK;
      log.setAttribute("data-follow", atBottom ? "bottom" : "reader");
    }
  });

  document.addEventListener("htmx:sseMessage", function (event) {
    var log = event.target;
    if (log.matches && log.matches("pre.log[data-follow='bottom']")) {
      log.scrollTop = log.scrollHeight;
    }
  });
})();

// A log stream ends only once the job has ended and its whole output was sent: from then on
// nothing may still be cancelled, held or released, and the status is asked for at once.
(function () {
  "use strict";
  document.addEventListener("htmx:sseClose", function (event) {
    if (!event.detail || event.detail.type !== "message") {
      return;
    }
    document.querySelectorAll("#job-status [data-while-active]").forEach(function (action) {
      action.remove();
    });
    document.body.dispatchEvent(new CustomEvent("job-output-ended"));
  });
})();
