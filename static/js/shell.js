// The terminal of /shell/{cluster}: xterm.js joined to the portal's WebSocket (app/web/shell.py).
// Keystrokes go out as binary frames, the window's size as a JSON text frame; the shell's
// output comes back as binary frames, and why it ended as one text frame before the close.
(function () {
  "use strict";

  // xterm.js styles its rows with <style> elements it creates itself. The page's
  // Content-Security-Policy applies only those carrying this response's nonce, which only
  // this script (loaded with it) can read.
  var nonce = document.currentScript ? document.currentScript.nonce : "";
  var createElement = document.createElement;
  document.createElement = function (name, options) {
    var element = createElement.call(document, name, options);
    if (nonce && String(name).toLowerCase() === "style") {
      element.nonce = nonce;
    }
    return element;
  };

  var host = document.getElementById("terminal");
  var status = document.getElementById("shell-status");
  var reopen = document.getElementById("shell-reopen");
  if (!host || !window.Terminal || !window.FitAddon) {
    return;
  }
  // The label screen readers give the terminal's input, in the page's language.
  window.Terminal.strings.promptLabel = host.dataset.promptLabel;
  var term = new window.Terminal({
    cursorBlink: true,
    fontFamily: "ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace",
    fontSize: 14,
    scrollback: 5000,
    theme: { background: "#16191d", foreground: "#e9edf1" }
  });
  var fit = new window.FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(host);
  fit.fit();

  var encoder = new TextEncoder();
  var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
  var socket = new WebSocket(scheme + window.location.host + host.dataset.socket);
  socket.binaryType = "arraybuffer";
  var told = false;

  function say(text) {
    status.textContent = text;
  }

  function notice(text) {
    told = true;
    say(text);
    term.write("\r\n\x1b[0m" + text.replace(/\n/g, "\r\n") + "\r\n");
  }

  function send(data) {
    if (socket.readyState === WebSocket.OPEN) {
      socket.send(data);
    }
  }

  function copySelection() {
    var text = term.getSelection();
    if (!text) {
      say(host.dataset.nothingSelected);
    } else if (navigator.clipboard) {
      navigator.clipboard.writeText(text).then(function () { say(host.dataset.copied); },
        function () { say(host.dataset.noClipboard); });
    } else {
      say(host.dataset.noClipboard);
    }
    term.focus();
  }

  function pasteClipboard() {
    if (!navigator.clipboard || !navigator.clipboard.readText) {
      say(host.dataset.noClipboard);
      return;
    }
    navigator.clipboard.readText().then(function (text) {
      term.paste(text);
      term.focus();
    }, function () { say(host.dataset.noClipboard); });
  }

  socket.addEventListener("open", function () {
    send(JSON.stringify({ csrf: host.dataset.csrf, columns: term.cols, rows: term.rows }));
    say(host.dataset.connected);
    term.focus();
  });
  socket.addEventListener("message", function (event) {
    if (typeof event.data === "string") {
      notice(event.data);
    } else {
      term.write(new Uint8Array(event.data));
    }
  });
  socket.addEventListener("close", function () {
    if (!told) {
      notice(host.dataset.closed);
    }
    term.options.disableStdin = true;
    document.getElementById("shell-paste").disabled = true;
    reopen.hidden = false;
  });

  term.onData(function (data) { send(encoder.encode(data)); });
  // Input xterm.js reports as raw bytes (some mouse reports): one character per byte.
  term.onBinary(function (data) {
    send(Uint8Array.from(data, function (c) { return c.charCodeAt(0) & 255; }));
  });
  term.onResize(function (size) {
    send(JSON.stringify({ columns: size.cols, rows: size.rows }));
  });
  // Ctrl+Shift+C copies the selection; Ctrl+Shift+V is left to the browser, whose paste
  // xterm.js receives. Ctrl+C stays the shell's interrupt.
  term.attachCustomKeyEventHandler(function (event) {
    if (event.type !== "keydown" || !event.ctrlKey || !event.shiftKey) {
      return true;
    }
    if (event.code === "KeyC") {
      event.preventDefault();
      copySelection();
      return false;
    }
    return event.code !== "KeyV";
  });
  document.getElementById("shell-copy").addEventListener("click", copySelection);
  document.getElementById("shell-paste").addEventListener("click", pasteClipboard);
  new ResizeObserver(function () { fit.fit(); }).observe(host);
  // Leaving the page ends the shell at once rather than when the browser gets round to it.
  window.addEventListener("pagehide", function () { socket.close(1000); });
}());
