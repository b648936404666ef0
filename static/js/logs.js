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
