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

  function show(change, notice) {
    // The feed words it in the reader's language.
    var note = new Notification(notice.title, {
      body: notice.body,
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
        data.changes.forEach(function (change, index) { show(change, data.notices[index]); });
      })
      .catch(function () { /* offline or signed out: try again at the next tick */ });
  }

  // The button's words, in the page's language when it gives them (data-say-*).
  var ENGLISH = {
    on: "Turn on browser notifications",
    off: "Turn off browser notifications",
    unsupported: "This browser cannot show notifications.",
    enabled: "Browser notifications are on.",
    disabled: "Browser notifications are off.",
    blocked: "Your browser blocks notifications from this site; allow them in its site settings."
  };

  function words(key) {
    var button = document.getElementById("browser-notify");
    var attribute = "say" + key.charAt(0).toUpperCase() + key.slice(1);
    return (button && button.dataset[attribute]) || ENGLISH[key];
  }

  function say(key) {
    var status = document.getElementById("browser-notify-status");
    if (status) { status.textContent = words(key); }
  }

  function setUpButton() {
    var button = document.getElementById("browser-notify");
    if (!button) { return; }
    // Shown only once it works: a click before this script ran would do nothing.
    button.hidden = false;
    if (!supported()) {
      button.disabled = true;
      say("unsupported");
      return;
    }
    if (enabled()) { button.textContent = words("off"); say("enabled"); }
    button.addEventListener("click", function () {
      if (enabled()) {
        localStorage.removeItem(KEY);
        button.textContent = words("on");
        say("disabled");
        return;
      }
      Notification.requestPermission().then(function (permission) {
        if (permission !== "granted") { say("blocked"); return; }
        localStorage.setItem(KEY, "on");
        localStorage.removeItem(CURSOR);
        button.textContent = words("off");
        say("enabled");
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
