// R.I.P. Market: play against the bots. Plain JavaScript, no build step.
// Talks to the JSON API of ripmarket_env/server/app.py; the page keeps the current game's
// id and seat token in sessionStorage so a reload resumes it. The seat token goes in the
// X-Seat-Token header (never in a URL); an action names the decision_number it answers.
"use strict";

const DEFAULT_BOTS = ["greedy", "survivor", "shark", "hoarder", "trickster"];
const STORE = "ripmarket.game";

const $ = (id) => document.getElementById(id);
let bots = [];
let game = null; // {id, token}
let decisionNumber = null; // the pending decision of the game shown
let busy = false;

// ------------------------------------------------------------------ helpers
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k === "style") node.setAttribute("style", v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(node.dataset, v);
    else if (v === true) node.setAttribute(k, "");
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (game && path.startsWith("/api/games/")) opts.headers["X-Seat-Token"] = game.token;
  if (body !== undefined) {
    opts.headers["content-type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  let data = null;
  const text = await res.text();
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { detail: text }; }
  if (!res.ok) {
    const err = new Error((data && data.detail) || res.statusText);
    err.status = res.status;
    throw err;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  if (!message) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = message;
}

function setStatus(text) { $("status").textContent = text; }

// ------------------------------------------------------------------ setup
function fillSetup() {
  const players = $("players");
  for (let n = 2; n <= 10; n++) players.append(el("option", { value: n, text: `${n} players` }));
  players.value = "4";
  players.addEventListener("change", () => { fillSeats(); fillOpponents(); });
  $("seat").addEventListener("change", fillOpponents);
  fillSeats();
  fillOpponents();
  $("bot-help").replaceChildren(
    el("h3", { text: "The bots" }),
    el("dl", {}, bots.flatMap((b) => [el("dt", { text: b.name }), el("dd", { text: b.description })])),
  );
  $("setup-form").addEventListener("submit", (ev) => { ev.preventDefault(); startGame(); });
}

function fillSeats() {
  const n = Number($("players").value);
  const seat = $("seat");
  const old = Number(seat.value || 0);
  seat.replaceChildren(...Array.from({ length: n }, (_, q) => el("option", { value: q, text: `seat ${q}` })));
  seat.value = String(Math.min(old, n - 1));
}

function fillOpponents() {
  const n = Number($("players").value);
  const me = Number($("seat").value);
  const box = $("opponents");
  const previous = {};
  box.querySelectorAll("select").forEach((s) => { previous[s.dataset.seat] = s.value; });
  const names = bots.map((b) => b.name);
  const defaults = DEFAULT_BOTS.filter((x) => names.includes(x));
  const rows = [];
  let i = 0;
  for (let q = 0; q < n; q++) {
    if (q === me) {
      rows.push(el("label", { class: "opp you" }, `seat ${q}`, el("span", { class: "you-tag", text: "you" })));
      continue;
    }
    const sel = el("select", { dataset: { seat: String(q) }, "aria-label": `bot for seat ${q}` },
      names.map((name) => el("option", { value: name, text: name })));
    sel.value = previous[q] || defaults[i % Math.max(defaults.length, 1)] || names[0];
    i++;
    rows.push(el("label", { class: "opp" }, `seat ${q}`, sel));
  }
  box.replaceChildren(...rows);
}

async function startGame() {
  showError("");
  const players = Number($("players").value);
  const seat = Number($("seat").value);
  const opponents = Array.from($("opponents").querySelectorAll("select"))
    .sort((a, b) => Number(a.dataset.seat) - Number(b.dataset.seat)).map((s) => s.value);
  const body = { players, seat, opponents };
  const seed = $("seed").value.trim();
  if (seed !== "") body.seed = Number(seed);
  const rules = {};
  if ($("tie_rule").value) rules.tie_rule = $("tie_rule").value;
  if ($("ghost_phase").value) rules.ghost_phase = $("ghost_phase").value;
  if (Object.keys(rules).length) body.rules = rules;
  $("start").disabled = true;
  setStatus("Dealing the cards…");
  try {
    const state = await api("POST", "/api/games", body);
    game = { id: state.game_id, token: state.seat_token };
    sessionStorage.setItem(STORE, JSON.stringify(game));
    render(state);
  } catch (e) {
    showError(e.message);
    setStatus("");
  } finally {
    $("start").disabled = false;
  }
}

function showSetup() {
  game = null;
  sessionStorage.removeItem(STORE);
  $("game").hidden = true;
  $("setup").hidden = false;
  $("new-game").hidden = true;
  document.body.dataset.status = "setup";
  setStatus("");
}

// ------------------------------------------------------------------ acting
async function act(action) {
  if (busy || !game) return;
  busy = true;
  document.body.classList.add("busy");
  document.querySelectorAll("[data-action]").forEach((b) => { b.disabled = true; });
  showError("");
  try {
    const state = await api("POST", `/api/games/${encodeURIComponent(game.id)}/actions`, { action, decision_number: decisionNumber });
    render(state);
  } catch (e) {
    showError(e.message);
    try { render(await api("GET", gamePath())); } catch (e2) { /* keep the error shown */ }
  } finally {
    busy = false;
    document.body.classList.remove("busy");
  }
}

function gamePath() {
  return `/api/games/${encodeURIComponent(game.id)}`;
}

// The record needs the seat token header, so it is fetched and handed over as a file.
async function downloadRecord(ev) {
  ev.preventDefault();
  const link = ev.currentTarget;
  try {
    const res = await fetch(`${gamePath()}/record`, { headers: { "X-Seat-Token": game.token } });
    if (!res.ok) throw new Error((await res.json()).detail || res.statusText);
    const url = URL.createObjectURL(new Blob([await res.text()], { type: "application/x-ndjson" }));
    const tmp = el("a", { href: url, download: link.getAttribute("download") });
    document.body.append(tmp);
    tmp.click();
    tmp.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  } catch (e) {
    showError(`The record could not be fetched: ${e.message}`);
  }
}

// A clickable thing on the table: enabled only when its action is legal now.
function actionButton(cls, action, label, ...children) {
  const legal = action !== null && action !== undefined;
  return el("button", {
    type: "button",
    class: `${cls}${legal ? " legal" : ""}`,
    disabled: !legal,
    "aria-label": label,
    title: label,
    dataset: legal ? { action: String(action) } : {},
    onclick: legal ? () => act(action) : null,
  }, ...children);
}

// ------------------------------------------------------------------ rendering
function cardFace(card, opts = {}) {
  const cls = ["card", `fam-${card.family}`];
  if (opts.small) cls.push("small");
  return el("div", { class: cls.join(" ") },
    el("div", { class: "card-head" },
      el("span", { class: "card-value", text: card.value }),
      el("span", { class: "card-name", text: card.name })),
    opts.small ? null : el("div", { class: "card-text", text: card.text }),
    opts.small || !card.keywords.length ? null : el("div", { class: "card-keywords", text: card.keywords.join(" · ") }));
}

function cardBack(small) {
  return el("div", { class: `card back${small ? " small" : ""}` }, el("span", { text: "?" }), el("span", { class: "back-label", text: "face-down" }));
}

function shadowFace(card, small) {
  return el("div", { class: `shadow-card ${card.family}${small ? " small" : ""}`, title: `${card.name}: ${card.text}` },
    el("div", { class: "shadow-name", text: card.name }),
    small ? null : el("div", { class: "card-text", text: card.text }),
    small ? null : el("div", { class: "counterplay", text: card.counterplay }));
}

function pips(hp, max, alive) {
  if (!alive) return el("div", { class: "ghost-label", text: "☠ GHOST" });
  const out = [];
  for (let i = 0; i < max; i++) out.push(el("span", { class: `pip${i < hp ? " full" : ""}`, "aria-hidden": "true" }));
  return el("div", { class: "pips", title: `${hp} of ${max} HP`, "aria-label": `${hp} of ${max} HP` }, out, el("span", { class: "hp-num", text: `${hp}/${max}` }));
}

function seatBox(state, s) {
  const cls = ["seat"];
  if (!s.alive) cls.push("ghost");
  if (s.is_you) cls.push("you");
  if (s.deciding) cls.push("deciding");
  if (s.target_action !== null) cls.push("targetable");
  const head = el("div", { class: "seat-head" },
    el("span", { class: "seat-name", text: s.is_you ? `${s.name} · you` : `${s.name} · ${s.controller}` }),
    s.first_player ? el("span", { class: "first", title: "First Player", text: "★" }) : null);
  const info = el("div", { class: "seat-info" },
    el("span", { text: `hand ${s.hand_count}` }),
    el("span", { text: `shadow ${s.shadow_count}` }),
    s.took ? el("span", { class: "took", text: s.took === "deck" ? "took: deck" : `took: ${s.took_card ? s.took_card.name : "Market"}` }) : null);
  let played = null;
  if (s.played) {
    played = el("div", { class: "played" },
      s.played.card ? cardFace(s.played.card, { small: true }) : cardBack(true),
      s.played.card && s.played.face_down ? el("span", { class: "fd-note", text: "face-down" }) : null,
      s.target !== null ? el("span", { class: "target", text: `→ ${state.table.seats[s.target].name}` }) : null);
  } else if (s.has_acted && !s.deciding) {
    played = el("div", { class: "played none", text: s.alive ? "played nothing" : "" });
  }
  const haunt = s.haunted_by.length
    ? el("div", { class: "haunts" }, s.haunted_by.map((c) => shadowFace(c, true)))
    : null;
  const body = [head, pips(s.hp, s.max_hp, s.alive), info, played, haunt];
  const label = s.target_action !== null ? `choose ${s.name}` : s.name;
  const box = actionButton(cls.join(" "), s.target_action, label, ...body);
  box.dataset.seat = String(s.seat);
  return box;
}

function renderBoard(state) {
  const t = state.table;
  const ring = $("ring");
  const n = state.players;
  const boxes = t.seats.map((s) => {
    const k = (s.seat - state.seat + n) % n; // you at the bottom, clockwise round the table
    const theta = Math.PI / 2 + (2 * Math.PI * k) / n;
    const x = 50 + 40 * Math.cos(theta);
    const y = 50 + 39 * Math.sin(theta);
    const box = seatBox(state, s);
    box.style.left = `${x}%`;
    box.style.top = `${y}%`;
    return box;
  });
  ring.replaceChildren(...boxes);

  const market = t.market.map((m) => {
    const label = m.card ? `Market slot ${m.slot}: ${m.card.name} (${m.card.value})` : `Market slot ${m.slot}: empty`;
    return actionButton("market-slot", m.action, label, m.card ? cardFace(m.card, { small: true }) : el("div", { class: "card empty small", text: "empty" }));
  });
  const deck = actionButton("deck", t.deck_action, "Take the top card of the Living Deck",
    el("div", { class: "card back small deck-card" }, el("span", { text: t.living_deck }), el("span", { class: "back-label", text: "Living Deck" })));
  $("center").replaceChildren(
    el("div", { class: `rule${t.rule !== "none" ? " active" : ""}` }, "Rule: ", el("strong", { text: t.rule })),
    el("div", { class: "round", text: t.epilogue ? `Round ${state.round} · epilogue` : `Round ${state.round}` }),
    el("div", { class: "market-row" }, deck, el("div", { class: "market" }, el("div", { class: "market-label", text: "Market" }), el("div", { class: "market-cards" }, market))),
    el("div", { class: "piles", text: `discard ${t.living_discard} · Shadow Deck ${t.shadow_deck} · Shadow discard ${t.shadow_discard}` }),
  );
}

function renderHand(state) {
  const hand = state.hand.map((c) => {
    const label = c.action !== null ? `${c.name} (${c.value})` : `${c.name} (${c.value}), not playable now`;
    const btn = actionButton("hand-card", c.action, label, cardFace(c));
    if (c.count > 1) btn.append(el("span", { class: "count", text: `×${c.count}` }));
    if (c.face_down) btn.append(el("span", { class: "fd-badge", text: "plays face-down" }));
    return btn;
  });
  $("hand").replaceChildren(...(hand.length ? hand : [el("p", { class: "muted", text: "No Living cards." })]));
  const me = state.table.seats[state.seat];
  $("hand-title").textContent = me.alive ? "Your hand" : "Your hand (you are a Ghost: Ghosts hold no Living cards)";
  const sh = state.shadow_hand.map((c) => {
    const btn = actionButton("hand-card shadow", c.action, `${c.name}: ${c.text}`, shadowFace(c, false));
    if (c.count > 1) btn.append(el("span", { class: "count", text: `×${c.count}` }));
    return btn;
  });
  $("shadow-wrap").hidden = !sh.length && me.alive;
  $("shadow-hand").replaceChildren(...(sh.length ? sh : [el("p", { class: "muted", text: "No Shadow cards." })]));
}

function renderChoices(state) {
  const box = $("choices");
  if (state.status !== "your_turn") {
    box.replaceChildren(el("p", { class: "muted", text: state.status === "over" ? "The game is over." : "Waiting for the bots…" }));
    return;
  }
  box.replaceChildren(...state.legal_actions.map((a, i) =>
    el("button", {
      type: "button", class: `choice kind-${a.kind}`, dataset: { action: String(a.action) },
      title: a.label, onclick: () => act(a.action),
    }, el("span", { class: "num", text: `${i + 1}` }), el("span", { text: a.text }))));
}

function logItem(state, e) {
  const cls = ["log-entry", `kind-${e.kind}`];
  if (e.seat === state.seat) cls.push("mine");
  if (e.forced) cls.push("forced");
  return el("li", { class: cls.join(" ") }, e.text);
}

function roundTable(state, r) {
  const rows = r.seats.map((s) => {
    const cells = [
      el("td", { text: s.seat === state.seat ? `${s.name} (you)` : `${s.name} · ${state.controllers[s.seat]}` }),
      el("td", {}, s.card ? `${s.card.name} (${s.card.value})` : "–",
        s.revealed ? el("small", { text: " revealed" }) : null,
        s.target !== null ? el("small", { text: ` → player_${s.target}` }) : null,
        s.haunted_by.length ? el("small", { class: "haunt-note", text: ` · haunted: ${s.haunted_by.join(", ")}` }) : null),
      el("td", { class: "num", text: s.score === null ? "–" : s.score }),
      el("td", { class: `num${s.damage ? " dmg" : ""}`, text: s.damage ? `−${s.damage}` : "0" }),
      el("td", { class: "num", text: s.died ? `${s.hp} ☠ dies` : s.alive ? s.hp : `${s.hp} Ghost` }),
    ];
    return el("tr", { class: s.alive ? "" : "ghost-row" }, cells);
  });
  return el("table", { class: "round-table" },
    el("thead", {}, el("tr", {}, ["seat", "card", "score", "dmg", "HP"].map((h) => el("th", { text: h })))),
    el("tbody", {}, rows));
}

function renderLog(state) {
  const items = state.log.map((e) => logItem(state, e));
  $("log-title").textContent = `Round ${state.round}${state.status === "over" ? " (ended mid-round)" : " so far"}`;
  $("log-panel").hidden = state.status === "over" && !items.length;
  $("log").replaceChildren(...(items.length ? items : [el("li", { class: "muted", text: "Nothing yet this round." })]));
  const rounds = state.rounds.slice().reverse().map((r, i) => el("details", { class: "round-summary", open: i === 0 },
    el("summary", {}, `Round ${r.round}${r.epilogue ? " (epilogue)" : ""} · rule: ${r.rule}`),
    roundTable(state, r),
    el("ol", { class: "log small" }, r.events.map((e) => logItem(state, e)))));
  $("rounds").replaceChildren(...(rounds.length ? rounds : [el("p", { class: "muted", text: "No round resolved yet." })]));
}

function renderResult(state) {
  const box = $("result");
  const res = state.result;
  if (!res) { box.hidden = true; box.replaceChildren(); return; }
  const names = res.winners.map((q) => q === state.seat ? "you" : `player_${q} (${state.controllers[q]})`);
  const headline = res.you_won ? (res.winners.length === 1 ? "You win!" : "You share the win!") : `You lose. Winner: ${names.join(", ") || "nobody"}`;
  box.hidden = false;
  box.className = `result ${res.you_won ? "won" : "lost"}`;
  box.replaceChildren(
    el("h2", { id: "result-title", text: headline }),
    el("p", { text: `Game over after ${res.rounds} round(s). Rewards: ` + res.rewards.map((x, q) => `player_${q} ${x >= 0 ? "+" : ""}${x.toFixed(3)}`).join(", ") }),
    el("div", { class: "result-actions" },
      el("a", { class: "button", href: "#", download: `ripmarket-${game.id}.jsonl`, onclick: downloadRecord, text: "Download the game record" }),
      el("button", { type: "button", class: "primary", onclick: showSetup, text: "Play again" })),
  );
}

function render(state) {
  $("setup").hidden = true;
  $("game").hidden = false;
  $("new-game").hidden = false;
  document.body.dataset.status = state.status;
  decisionNumber = state.decision_number;
  const me = state.table.seats[state.seat];
  let prompt;
  if (state.status === "over") prompt = "The game is over.";
  else if (state.status === "your_turn") prompt = `${me.alive ? "" : "You are a Ghost. "}Your decision: ${state.decision.prompt}.`;
  else prompt = `Waiting for ${state.decision.name}…`;
  $("prompt").textContent = prompt;
  $("prompt").className = `prompt ${state.status}`;
  // A secret seed is 128 bits (more than a JavaScript number holds): the record shows it.
  const seed = state.practice ? `practice game, seed ${state.seed}` : "secret seed";
  setStatus(`${state.players} players · ${seed} · round ${state.round}`);
  renderResult(state);
  renderBoard(state);
  renderHand(state);
  renderChoices(state);
  renderLog(state);
}

// ------------------------------------------------------------------ start
async function boot() {
  $("new-game").addEventListener("click", async () => {
    if (game && document.body.dataset.status !== "over") {
      if (!window.confirm("Leave this game and set up a new one?")) return;
      try { await api("DELETE", gamePath()); } catch (e) { /* already gone */ }
    }
    showSetup();
  });
  try {
    bots = (await api("GET", "/api/bots")).bots;
  } catch (e) {
    showError(`Cannot reach the server: ${e.message}`);
    return;
  }
  fillSetup();
  document.body.dataset.status = "setup";
  const saved = sessionStorage.getItem(STORE);
  if (saved) {
    try {
      game = JSON.parse(saved);
      render(await api("GET", gamePath()));
      return;
    } catch (e) {
      showSetup();
    }
  }
}

boot();
