"""A stand-in for an interactive app gone bad (a notebook's output, a rogue extension), for the
browser test of the apps' own origin: ``uvicorn tests.e2e.hostile_app:app``.

Its page, opened through the portal's Connect, tries from the app's origin what the portal's
own origin would allow: read a portal page's CSRF token, call the API, mint a token, plant
the portal's cookies (by Set-Cookie and by script), with a Content-Security-Policy that lets
it do anything. It writes what each attempt got into ``#results`` and titles itself "done".
``HOSTILE_PORTAL`` is the portal's origin as the browser knows it.
"""

from __future__ import annotations

import json
import os

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route

PLANTED = "planted-by-header"
SET_COOKIES = [
    f"portal_session={PLANTED}; Path=/",
    f"portal_session={PLANTED}; Domain=portal.localhost; Path=/",
    f"__Host-portal_session={PLANTED}; Path=/; Secure",
    f"__Secure-portal_session={PLANTED}; Domain=portal.localhost; Path=/; Secure",
    f"portal_csrf={PLANTED}; Domain=portal.localhost; Path=/",
    "app_pref=kept; Domain=portal.localhost; Path=/",
]
# The policy an app may send: it governs the app's own pages and nothing of the portal's.
ANYTHING_GOES = "default-src * 'unsafe-inline' 'unsafe-eval' data: blob:"

SCRIPT = """
const PORTAL = %(portal)s;
const results = {};
let stolen = "";
let minted = "";
async function attempt(name, run) {
  try { results[name] = await run(); }
  catch (error) { results[name] = "blocked: " + error.name + ": " + error.message; }
}
function csrfIn(text) {
  const found = text.match(/name="csrf_token" value="([^"]+)"/);
  if (found) stolen = found[1];
  return found ? "TOKEN " + found[1] : null;
}
(async () => {
  results.cookies_seen = document.cookie;
  await attempt("read_csrf", async () => {
    const answer = await fetch(PORTAL + "/settings/tokens", {credentials: "include"});
    const text = await answer.text();
    return csrfIn(text) || "read, no token: " + answer.status;
  });
  await attempt("read_csrf_no_cors", async () => {
    const answer = await fetch(PORTAL + "/settings/tokens",
                               {credentials: "include", mode: "no-cors"});
    const text = await answer.text();
    return csrfIn(text) || "opaque: " + answer.type + ", " + text.length + " characters";
  });
  await attempt("read_csrf_in_frame", async () => {
    const frame = document.createElement("iframe");
    frame.src = PORTAL + "/settings/tokens";
    frame.title = "portal";
    document.body.append(frame);
    await new Promise((done) => { frame.onload = done; setTimeout(done, 3000); });
    const inner = frame.contentDocument;
    return inner ? (csrfIn(inner.documentElement.outerHTML) || "frame: no token")
                 : "frame: no access";
  });
  await attempt("api_me", async () => {
    const answer = await fetch(PORTAL + "/api/v1/me", {credentials: "include"});
    return "status " + answer.status + ": " + (await answer.text());
  });
  await attempt("api_me_no_cors", async () => {
    const answer = await fetch(PORTAL + "/api/v1/me", {credentials: "include", mode: "no-cors"});
    const text = await answer.text();
    return "opaque: " + answer.type + ", " + text.length + " characters";
  });
  await attempt("mint_by_form", async () => {
    // With the CSRF token if one was read above: what a same-origin page could do.
    const body = new URLSearchParams({name: "stolen-by-app", scopes: "read",
                                      expires_in_days: "1", csrf_token: stolen});
    const answer = await fetch(PORTAL + "/settings/tokens",
                               {method: "POST", body, credentials: "include", mode: "no-cors"});
    const text = answer.type === "opaque" ? "" : await answer.text();
    const found = text.match(/id="new-token-secret" type="text" value="([^"]+)"/);
    if (found) minted = found[1];
    return found ? "MINTED " + minted.slice(0, 8) + "…" : "sent, answer " + answer.type;
  });
  await attempt("mint_by_api", async () => {
    const answer = await fetch(PORTAL + "/api/v1/tokens", {
      method: "POST", credentials: "include",
      headers: {"Content-Type": "application/json"},
      body: JSON.stringify({name: "stolen-by-app", scopes: ["read"], expires_in_days: 1}),
    });
    return "status " + answer.status + ": " + (await answer.text());
  });
  await attempt("api_me_with_minted", async () => {
    if (!minted) return "no token to use";
    const headers = {Authorization: "Bearer " + minted};
    const answer = await fetch(PORTAL + "/api/v1/me", {headers});
    return "status " + answer.status + ": " + (await answer.text());
  });
  await attempt("plant_by_script", async () => {
    document.cookie = "portal_session=planted-by-script; domain=portal.localhost; path=/";
    document.cookie = "portal_csrf=planted-by-script; domain=portal.localhost; path=/";
    document.cookie = "__Host-portal_session=planted-by-script; domain=portal.localhost; " +
                      "path=/; secure";
    document.cookie = "__Host-portal_session=planted-by-script; path=/; secure";
    return "written; this page now sees: " + document.cookie;
  });
  document.getElementById("results").textContent = JSON.stringify(results, null, 1);
  document.title = "done";
})();
"""


def _page(portal: str) -> str:
    script = SCRIPT % {"portal": json.dumps(portal)}
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>running</title>'
        '</head><body><main><h1>A hostile app</h1><pre id="results">running</pre></main>'
        f"<script>{script}</script></body></html>"
    )


async def lab(request: Request) -> Response:
    if not request.url.path.endswith("/lab"):
        return PlainTextResponse("not here", status_code=404)
    response = HTMLResponse(
        _page(os.environ["HOSTILE_PORTAL"]),
        headers={"Content-Security-Policy": ANYTHING_GOES},
    )
    # HOSTILE_SET_COOKIES=0 leaves the portal's session alone, to try the other attacks alone.
    for cookie in SET_COOKIES if os.environ.get("HOSTILE_SET_COOKIES") != "0" else ():
        response.headers.append("set-cookie", cookie)
    return response


async def ready(request: Request) -> Response:
    # What tests/e2e/conftest.py's start-up wait asks every server it starts.
    return PlainTextResponse("ready")


app = Starlette(routes=[Route("/apps/sessions/{rest:path}", lab), Route("/signin", ready)])
