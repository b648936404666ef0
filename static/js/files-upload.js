// The Files page's upload form: sends the file in pieces (data-part-bytes each, the most
// one request may carry), shows the progress, and puts the file in place once all arrived.
// A piece the server did not take in order is resent from where the server says it stands.
(function () {
  "use strict";

  // What the form says, in the page's language (data-say-*); {name} marks a value.
  const ENGLISH = {
    lost: "The connection to the portal was lost.",
    failed: "The upload failed ({status}).",
    progress: "Uploading {name}: {percent} %",
    done: "Uploaded {name}.",
    refused: "{name} was not uploaded: {reason}",
  };

  function say(key, values) {
    const form = document.getElementById("upload-form");
    const attribute = "say" + key.charAt(0).toUpperCase() + key.slice(1);
    const text = (form && form.dataset[attribute]) || ENGLISH[key];
    return text.replace(/\{(\w+)\}/g, (whole, name) => (values && name in values ? String(values[name]) : whole));
  }

  function newUploadId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function request(method, url, token, body, onProgress) {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open(method, url);
      xhr.setRequestHeader("X-CSRF-Token", token);
      xhr.responseType = "json";
      if (onProgress) {
        xhr.upload.addEventListener("progress", (event) => onProgress(event.loaded));
      }
      xhr.addEventListener("load", () => resolve({ status: xhr.status, body: xhr.response || {} }));
      xhr.addEventListener("error", () => reject(new Error(say("lost"))));
      xhr.send(body);
    });
  }

  async function sendParts(form, file, base, show) {
    const token = form.dataset.csrf;
    const partBytes = Number(form.dataset.partBytes);
    const folder = encodeURIComponent(form.dataset.folder);
    let offset = 0;
    do {
      const piece = file.slice(offset, offset + partBytes);
      const url = `${base}?folder=${folder}&offset=${offset}`;
      const answer = await request("PUT", url, token, piece, (sent) => show(offset + sent));
      if (answer.status === 409 && answer.body.expected_offset !== undefined) {
        offset = answer.body.expected_offset;
        continue;
      }
      if (answer.status !== 200) {
        throw new Error(answer.body.detail || say("failed", { status: answer.status }));
      }
      offset = answer.body.size;
      show(offset);
    } while (offset < file.size);
  }

  async function complete(form, file, base) {
    const body = new URLSearchParams({ folder: form.dataset.folder, name: file.name, size: String(file.size) });
    if (form.elements.replace.checked) body.set("replace", "true");
    const answer = await request("POST", `${base}/complete`, form.dataset.csrf, body);
    if (answer.status !== 200) {
      throw new Error(answer.body.detail || say("failed", { status: answer.status }));
    }
    return answer.body;
  }

  async function upload(form) {
    const file = form.elements.file.files[0];
    const progress = document.getElementById("upload-progress");
    const status = document.getElementById("upload-status");
    const base = `/files/${encodeURIComponent(form.dataset.cluster)}/uploads/${newUploadId()}`;
    const show = (done) => {
      const percent = file.size ? Math.floor((done * 100) / file.size) : 100;
      progress.value = percent;
      status.textContent = say("progress", { name: file.name, percent: percent });
    };
    form.querySelector("button[type=submit]").disabled = true;
    progress.hidden = false;
    try {
      await sendParts(form, file, base, show);
      const done = await complete(form, file, base);
      status.textContent = say("done", { name: file.name });
      status.dataset.uploaded = done.path;
      // The folder again, listing the new file marked, with the same words on top.
      window.location.assign(done.folder_href);
    } catch (error) {
      status.textContent = say("refused", { name: file.name, reason: error.message });
      const folder = encodeURIComponent(form.dataset.folder);
      request("DELETE", `${base}?folder=${folder}`, form.dataset.csrf, null).catch(() => {});
    } finally {
      form.querySelector("button[type=submit]").disabled = false;
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("upload-form");
    if (!form) return;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      upload(form);
    });
  });
})();
