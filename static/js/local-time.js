// Times are sent in UTC as <time datetime="…Z" data-local-time="second|minute">; readers see
// them in their browser's time zone, and the UTC reading stays in the element's title.
// Fragments swapped in by htmx are rewritten too.
(function () {
  "use strict";

  var zoneFormat = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" });

  function pad(number) {
    return String(number).padStart(2, "0");
  }

  // The zone's short name at that moment ("CET", "GMT+5:30"), which changes with summer time.
  function zoneName(date) {
    var zone = zoneFormat.formatToParts(date).find(function (part) {
      return part.type === "timeZoneName";
    });
    return zone ? " " + zone.value : "";
  }

  function localText(date, withSeconds) {
    var text = date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) +
      " " + pad(date.getHours()) + ":" + pad(date.getMinutes());
    return (withSeconds ? text + ":" + pad(date.getSeconds()) : text) + zoneName(date);
  }

  function localize() {
    document.querySelectorAll("time[data-local-time]:not([data-localized])").forEach(function (time) {
      var date = new Date(time.getAttribute("datetime"));
      if (!isNaN(date.getTime())) {
        time.textContent = localText(date, time.getAttribute("data-local-time") === "second");
        time.setAttribute("data-localized", "");
      }
    });
  }

  document.addEventListener("DOMContentLoaded", localize);
  document.addEventListener("htmx:afterSwap", localize);
  document.addEventListener("htmx:oobAfterSwap", localize);
})();
