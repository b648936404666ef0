// Runs axe-core on each state of a portal page and tells the test what it found in console
// messages (a binding would not do: its answer cannot reach a page that is being left).
// tests/e2e/a11y.py puts the vendored axe source in place of the marker below and adds the
// result to every audited browser context as an init script.
(function () {
  "use strict";
  if (window.top !== window) return; // frames are scanned from the top document
  const report = (message) => console.debug("__a11y__" + JSON.stringify(message));
  // Third-party pages, whose markup the portal neither writes nor can fix: JupyterLab reached
  // through the portal's proxy (/apps/sessions/<id>/...), and Swagger UI on /api/docs, where
  // the portal serves an empty element that the vendored swagger-ui-dist bundle fills with
  // all of the page's headings, landmarks and controls. about:blank has no markup at all.
  const thirdParty = location.pathname.startsWith("/apps/sessions/") || location.pathname === "/api/docs";
  if (!location.protocol.startsWith("http") || thirdParty) {
    report({ kind: "open", doc: null });
    return;
  }
  const doc = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  report({ kind: "open", doc });

  /*AXE_SOURCE*/

  const axe = window.axe;
  const OPTIONS = { resultTypes: ["violations"] };
  const lastFragment = new Map();
  // A page left before it has loaded is scanned once parsed, never half-way through a table.
  // Parsed means readyState has left "loading", not DOMContentLoaded: that waits for deferred
  // scripts, and a navigation started while one is still being fetched aborts the document
  // (readyState jumps to "complete") without ever firing it.
  const parsed = new Promise((resolve) => {
    if (document.readyState !== "loading") resolve();
    else document.addEventListener("readystatechange", resolve, { once: true });
  });
  let queue = parsed;
  let busy = 0;
  let pageScanned = false;
  let scannedHtml = "";

  function slim(violation) {
    return {
      id: violation.id,
      impact: violation.impact,
      help: violation.help,
      helpUrl: violation.helpUrl,
      targets: violation.nodes.map((node) => node.target.map(String).join(" ")),
    };
  }

  function found(state, violations) {
    if (violations.length === 0) return null;
    return report({ kind: "violations", url: location.href, state, violations });
  }

  // htmx marks an element while its request is out; that alone is not a new state.
  function currentHtml() {
    return document.documentElement.outerHTML.replace(/ ?htmx-(request|swapping|settling|added)/g, "");
  }

  function scan(context, state) {
    busy += 1;
    queue = queue
      .then(() => {
        scannedHtml = currentHtml();
        return axe.run(context, OPTIONS);
      })
      .then(
        (results) => found(state, results.violations.map(slim)),
        (error) => found(state, [{ id: "axe-error", impact: "error", help: String(error), helpUrl: "", targets: [] }]),
      )
      .catch(() => null)
      .finally(() => { busy -= 1; });
    return queue;
  }

  function scanPage() {
    if (pageScanned) return;
    pageScanned = true;
    scan(document, "page");
  }

  // Polling fragments often come back unchanged; only a new rendering is a new state.
  function scanFragment(element) {
    if (!pageScanned || !element.isConnected) return;
    const html = element.outerHTML;
    if (element.id && lastFragment.get(element.id) === html) return;
    if (element.id) lastFragment.set(element.id, html);
    scan(element, `after an htmx swap of ${element.id ? "#" + element.id : element.tagName.toLowerCase()}`);
  }

  // Waits for every scan asked for so far (not for those a polling page keeps adding while
  // it waits, or a busy page would never be done); a page changed since by its own scripts
  // (a status line, a copied token, a live log) is scanned once more as it is being left.
  async function settled() {
    scanPage();
    await queue;
    if (currentHtml() !== scannedHtml) await scan(document, "page, as changed by its scripts");
    return null;
  }

  window.__a11y = { settled };
  window.addEventListener("load", scanPage, { once: true });
  document.addEventListener("htmx:afterSettle", (event) => scanFragment(event.target));
  // An htmx request replaces what is on screen: it waits until that has been scanned.
  document.addEventListener("htmx:confirm", (event) => {
    if (busy === 0 && pageScanned && currentHtml() === scannedHtml) return;
    event.preventDefault();
    settled().then(() => event.detail.issueRequest());
  });
  // The test holds a navigation away from this page until it hears that the page, as it
  // was left, has been scanned (see a11y.py).
  window.addEventListener("beforeunload", () => {
    settled().then(() => report({ kind: "left", doc }));
  });
})();
