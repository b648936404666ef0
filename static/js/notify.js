// Browser notifications while a portal tab is open: asks permission only when the user
// presses the button on the Notifications page, then polls the user's own job changes.
(function () {
  "use strict";

  var FEED = "/notifications/feed";
  var EVERY_MS = 20000;
  var KEY = "portal-notify";
  var CURSOR = "portal-notify-cursor";

  function supported() { return "Notification" in window && "localStorage" in window; }
  function enabled() {
    return supported() && Notification.permission === "granted" && localStorage.getItem(KEY) === "on";
  }

  function show(change) {
    var state = change.state.replace(/_/g, " ");
    var slurm = change.slurm_job_id ? " (Slurm " + change.slurm_job_id + ")" : "";
    var note = new Notification("Job " + change.name + " is " + state, {
      body: "Job " + change.name + slurm + " is now " + state + ".",
      tag: "portal-job-" + change.job_id + "-" + change.state
    });
    note.onclick = function () { window.focus(); window.location.href = "/jobs/" + change.job_id; };
  }

  function poll() {
    if (!enabled()) { return; }
    var cursor = localStorage.getItem(CURSOR);
    var url = cursor === null ? FEED : FEED + "?after=" + encodeURIComponent(cursor);
    fetch(url, { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (data) {
        if (!data) { return; }
        // Several tabs share the cursor, so each change is shown once, not once per tab.
        if (cursor !== null && localStorage.getItem(CURSOR) !== cursor) { return; }
        localStorage.setItem(CURSOR, String(data.cursor));
        data.changes.forEach(show);
      })
      .catch(function () { /* offline or signed out: try again at the next tick */ });
  }

  function say(text) {
    var status = document.getElementById("browser-notify-status");
    if (status) { status.textContent = text; }
  }

  function setUpButton() {
    var button = document.getElementById("browser-notify");
    if (!button) { return; }
    if (!supported()) {
      button.disabled = true;
      say("This browser cannot show notifications.");
      return;
    }
    if (enabled()) { button.textContent = "Turn off browser notifications"; say("Browser notifications are on."); }
    button.addEventListener("click", function () {
      if (enabled()) {
        localStorage.removeItem(KEY);
        button.textContent = "Turn on browser notifications";
        say("Browser notifications are off.");
        return;
      }
      Notification.requestPermission().then(function (permission) {
        if (permission !== "granted") { say("Your browser blocks notifications from this site; allow them in its site settings."); return; }
        localStorage.setItem(KEY, "on");
        localStorage.removeItem(CURSOR);
        button.textContent = "Turn off browser notifications";
        say("Browser notifications are on.");
        poll();
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    setUpButton();
    if (document.querySelector(".nav-user")) {
      poll();
      setInterval(poll, EVERY_MS);
    }
  });
})();
