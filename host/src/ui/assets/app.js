// toolcell ui: the page's only script. It sends what a button changes
// (with the page's token in a header), shows the answer as text, and
// redraws the page's body when the server says what it shows changed.
"use strict";

// The token of the printed address arrives once, in the fragment: kept in
// this page's own storage (of this origin, so of this port) and taken out
// of the address bar.
const KEY = "toolcell-token";
if (location.hash.startsWith("#token=")) {
  localStorage.setItem(KEY, location.hash.slice("#token=".length));
  history.replaceState(null, "", location.pathname + location.search);
}

function say(text, ok) {
  const status = document.getElementById("status");
  status.textContent = text; // text, never markup
  status.className = ok ? "ok" : "error";
}

// A run's waiting calls open as dialogs, as the terminal's prompt stops
// the run; "Decide later" leaves each as a card on the page, across redraws.
const putOff = new Set();
function openApprovals() {
  for (const dialog of document.querySelectorAll("dialog.approval")) {
    if (!dialog.open && !putOff.has(dialog.dataset.call)) dialog.showModal();
  }
}

// What the model is writing now (a chat started from the page), kept so a
// redraw does not blank it.
let turn = null;
function showTurn() {
  const now = document.getElementById("streaming");
  if (!now || !turn) return;
  now.querySelector(".thinking").textContent = turn.thinking;
  now.querySelector(".text").textContent = turn.text;
  now.hidden = !(turn.thinking || turn.text);
}

// Redraws may overlap: only the newest one's answer is drawn.
let drawn = 0;
async function redraw() {
  const mine = ++drawn;
  const answer = await fetch(location.pathname + location.search, {
    headers: { "X-Fragment": "1" },
  });
  const text = await answer.text();
  if (mine !== drawn) return;
  if (answer.ok) {
    // The server's own escaped page body.
    document.getElementById("live-body").innerHTML = text;
    showTurn();
    openApprovals();
  } else {
    say(text, false);
  }
}

document.addEventListener("click", (event) => {
  const later = event.target.closest("button[data-close]");
  if (!later) return;
  const dialog = later.closest("dialog");
  putOff.add(dialog.dataset.call);
  dialog.close();
});

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button[data-post]");
  if (!button) return;
  event.preventDefault();
  if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
  const body = JSON.parse(button.dataset.body || "{}");
  if (button.dataset.field) {
    body[button.dataset.field] = document.getElementById(button.dataset.field).value;
  }
  if (button.dataset.reason) {
    const reason = document.getElementById(button.dataset.reason);
    if (reason && reason.value.trim()) body.reason = reason.value;
  }
  const token = localStorage.getItem(KEY);
  if (!token) {
    say("To change anything, open the address toolcell ui printed (with its token).", false);
    return;
  }
  button.disabled = true;
  try {
    const answer = await fetch(button.dataset.post, {
      method: "POST",
      headers: { "X-Toolcell-Token": token, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await answer.text();
    if (answer.ok && button.dataset.follow) {
      // A run was started: go to its page.
      location.assign("/runs/" + JSON.parse(text)[button.dataset.follow]);
      return;
    }
    say(text, answer.ok);
    await redraw();
  } catch (error) {
    say(String(error), false);
  } finally {
    button.disabled = false;
  }
});

openApprovals();

const live = document.body.dataset.live;
if (live) {
  const events = new EventSource(live);
  events.addEventListener("change", () => redraw());
  // What the model is writing now: shown as text as it grows.
  events.addEventListener("turn", (event) => {
    turn = JSON.parse(event.data);
    showTurn();
  });
}
