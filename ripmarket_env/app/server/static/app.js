// R.I.P. Market: play against the bots. Plain JavaScript, no build step.
// Talks to the JSON API of ripmarket_env/app/server/app.py; the page keeps the current game's
// id and seat token in sessionStorage so a reload resumes it. The seat token goes in the
// X-Seat-Token header (never in a URL); an action names the decision_number it answers.
"use strict";

// The setup's first choice per seat, repeated round the table: the server's default
// opponents (/api/bots: the trained bot for every table), else these heuristics.
let DEFAULT_BOTS = ["greedy", "survivor", "shark", "hoarder", "trickster"];
const STORE = "ripmarket.game";
const SPEED = "ripmarket.speed";
// Events worth showing one at a time while the bots play (the rest go to the log only).
const SHOWN = new Set(["acquire_deck", "acquire_market", "play", "replace", "target", "attack", "hit",
  "market_take", "market_discard", "market_flush", "rule", "pass", "haunt", "reveal", "deflect",
  "damage", "death", "trigger", "exorcise", "skip", "note"]);

const $ = (id) => document.getElementById(id);
let bots = [];
let game = null; // {id, token}
let decisionNumber = null; // the pending decision of the game shown
let busy = false;
let state = null;
let playback = null; // {skip: bool}
let lastTouch = 0;

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

async function api(method, path, body, token) {
  const opts = { method, headers: {} };
  if (token) opts.headers["X-Seat-Token"] = token;
  else if (game && path.startsWith("/api/games/")) opts.headers["X-Seat-Token"] = game.token;
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
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const speed = () => Number($("speed").value);
const botByName = (name) => bots.find((b) => b.name === name);
function shortLevel(level) { return (level || "").split(":")[0]; }
function seatLabel(s) { return s.is_you ? `${s.name} · you` : `${s.name} · ${s.controller}`; }

// ------------------------------------------------------------------ loading
// While a game is being set up, ask the server what it is loading (GET /api/status).
function startLoading(text) {
  $("loading").hidden = false;
  $("loading-text").textContent = text;
  $("loading-detail").textContent = "";
  $("loading-fill").style.width = "5%";
  let stopped = false;
  const t0 = performance.now();
  (async () => {
    while (!stopped) {
      try {
        const s = await api("GET", "/api/status");
        if (stopped) break;
        const secs = Math.round((performance.now() - t0) / 1000);
        if (s.stage) {
          $("loading-text").textContent = `${s.stage}…`;
          $("loading-detail").textContent = `step ${Math.min(s.done + 1, s.total)} of ${s.total} · ${secs} s`;
          $("loading-fill").style.width = `${Math.round(100 * (s.done + 0.5) / s.total)}%`;
        } else {
          $("loading-text").textContent = text;
          $("loading-detail").textContent = secs >= 2 ? `${secs} s` : "";
          $("loading-fill").style.width = "90%";
        }
      } catch (e) { /* the request itself reports errors */ }
      await sleep(400);
    }
  })();
  return () => { stopped = true; $("loading").hidden = true; };
}

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
    el("dl", {}, bots.flatMap((b) => [
      el("dt", {}, b.name, b.level ? el("span", { class: "level", text: shortLevel(b.level) }) : null),
      el("dd", { text: b.description })])),
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
      bots.map((b) => el("option", { value: b.name, text: b.level ? `${b.name} (${shortLevel(b.level)})` : b.name })));
    sel.value = previous[q] || defaults[i % Math.max(defaults.length, 1)] || names[0];
    i++;
    rows.push(el("label", { class: "opp" }, `seat ${q}`, sel));
  }
  box.replaceChildren(...rows);
}

// The setup form's rule variants (index.html, one <select> each; docs/RULES.md, "Rule variants").
const RULE_VARIANTS = ["tie_rule", "ghost_phase", "no_survivor", "deflect_target", "opening_bonus", "token_tie"];
// yes/no variants: the <select>'s "true" / "false" are sent as booleans
const BOOL_VARIANTS = ["grace_round"];

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
  for (const field of RULE_VARIANTS) {  // an empty choice keeps the rulebook's value
    if ($(field).value) rules[field] = $(field).value;
  }
  for (const field of BOOL_VARIANTS) {
    if ($(field).value) rules[field] = $(field).value === "true";
  }
  if (Object.keys(rules).length) body.rules = rules;
  $("start").disabled = true;
  busy = true;
  document.body.classList.add("busy");
  const stop = startLoading("Dealing the cards");
  try {
    const st = await api("POST", "/api/games", body);
    game = { id: st.game_id, token: st.seat_token };
    sessionStorage.setItem(STORE, JSON.stringify(game));
    rememberGame(game);
    stop();
    window.scrollTo(0, 0);
    await show(st);
  } catch (e) {
    stop();
    showError(e.message);
    if (e.status === 429 && myGames().length) offerEndGames();
    setStatus("");
  } finally {
    $("start").disabled = false;
    busy = false;
    document.body.classList.remove("busy");
  }
}

// The games this browser started (localStorage): a refused start (429, too many live
// games) offers to end them, so a player who lost a tab is not locked out.
const MINE = "ripmarket-my-games";
function myGames() {
  try { return JSON.parse(localStorage.getItem(MINE) || "[]"); } catch (e) { return []; }
}
function rememberGame(g) {
  localStorage.setItem(MINE, JSON.stringify([...myGames().filter((x) => x.id !== g.id), g].slice(-16)));
}
function forgetGame(id) {
  localStorage.setItem(MINE, JSON.stringify(myGames().filter((x) => x.id !== id)));
}
function offerEndGames() {
  const box = $("error");
  const button = el("button", { type: "button", id: "end-previous", text: "End my previous games and start" });
  button.addEventListener("click", async () => {
    for (const g of myGames()) {
      try {
        await api("DELETE", `/api/games/${encodeURIComponent(g.id)}`, undefined, g.token);
      } catch (e) { /* already gone */ }
      forgetGame(g.id);
    }
    startGame();
  });
  box.append(" ", button);
}

function showSetup() {
  game = null;
  state = null;
  sessionStorage.removeItem(STORE);
  $("game").hidden = true;
  $("result").hidden = true;
  $("setup").hidden = false;
  $("new-game").hidden = true;
  document.body.dataset.status = "setup";
  hideTip();
  setStatus("");
}

// ------------------------------------------------------------------ acting
async function act(action) {
  if (playback) { playback.skip = true; return; }
  if (busy || !game || !state || state.status !== "your_turn") return;
  busy = true;
  document.body.classList.add("busy");
  document.querySelectorAll("[data-action]").forEach((b) => { b.disabled = true; });
  hideTip();
  hideBanner();
  showError("");
  try {
    const st = await api("POST", `/api/games/${encodeURIComponent(game.id)}/actions`, { action, decision_number: decisionNumber });
    await show(st);
  } catch (e) {
    showError(e.message);
    try { await show(await api("GET", gamePath()), false); } catch (e2) { /* keep the error shown */ }
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

// A clickable thing on the table: it acts only when its action is legal now. The others are
// aria-disabled rather than disabled, so that a tap or hover still shows the card's text.
function actionButton(cls, action, label, ...children) {
  const legal = action !== null && action !== undefined;
  return el("button", {
    type: "button",
    class: `${cls}${legal ? " legal" : ""}`,
    "aria-disabled": legal ? null : "true",
    "aria-label": label,
    dataset: legal ? { action: String(action) } : {},
    onclick: legal ? (ev) => { if (!tapWantsTip(ev)) act(action); } : null,
  }, ...children);
}

// ------------------------------------------------------------------ card text: hover and tap
// Every card carries its text in data-tip; the mouse shows it on hover, a finger on tap
// (a tap on a playable card shows the text first, with a button to play it).
function tipFor(node, card, kind) {
  node.dataset.tipName = card.name;
  node.dataset.tipText = card.text;
  node.dataset.tipMeta = kind === "shadow"
    ? `${card.family === "blessing" ? "Blessing" : "Curse"}${card.counterplay ? " · " + card.counterplay : ""}`
    : [card.value !== undefined ? `value ${card.value}` : null, card.family, ...(card.keywords || []),
      card.face_down ? "plays face-down" : null].filter(Boolean).join(" · ");
  node.classList.add("has-tip");
  return node;
}

function showTip(target) {
  const tip = $("tip");
  const holder = target.closest(".has-tip");
  if (!holder) return;
  const button = holder.closest("[data-action]:not(:disabled)");
  const canAct = button && state && state.status === "your_turn" && !busy;
  tip.replaceChildren(...[
    el("div", { class: "tip-name", text: holder.dataset.tipName }),
    el("div", { class: "tip-text", text: holder.dataset.tipText }),
    holder.dataset.tipMeta ? el("div", { class: "tip-meta", text: holder.dataset.tipMeta }) : null,
    canAct && tip.dataset.touch === "1"
      ? el("button", { type: "button", class: "primary tip-act", text: button.getAttribute("aria-label") || "Choose it",
        onclick: () => { hideTip(); act(Number(button.dataset.action)); } })
      : null,
  ].filter(Boolean));
  tip.hidden = false;
  tip.dataset.for = holder.dataset.tipName;
  const r = holder.getBoundingClientRect();
  const w = Math.min(280, window.innerWidth - 16);
  tip.style.width = `${w}px`;
  let left = Math.max(8, Math.min(window.innerWidth - w - 8, r.left + r.width / 2 - w / 2));
  tip.style.left = `${left}px`;
  const h = tip.offsetHeight;
  let top = r.top - h - 8;
  if (top < 8) top = Math.min(window.innerHeight - h - 8, r.bottom + 8);
  tip.style.top = `${Math.max(8, top)}px`;
}

function hideTip() { const t = $("tip"); t.hidden = true; t.dataset.for = ""; }

// A touch on a card: the first tap shows its text (and a button to play it), not the move.
function tapWantsTip(ev) {
  if (performance.now() - lastTouch > 800) return false;
  const holder = ev.target.closest(".has-tip");
  if (!holder) return false;
  $("tip").dataset.touch = "1";
  showTip(holder);
  return true;
}

function wireTips() {
  document.addEventListener("pointerover", (ev) => {
    if (ev.pointerType === "mouse" && ev.target.closest(".has-tip")) { $("tip").dataset.touch = "0"; showTip(ev.target); }
  });
  document.addEventListener("pointerout", (ev) => {
    if (ev.pointerType === "mouse" && ev.target.closest(".has-tip") && !ev.relatedTarget?.closest?.(".has-tip")) hideTip();
  });
  document.addEventListener("touchstart", () => { lastTouch = performance.now(); }, { passive: true, capture: true });
  document.addEventListener("click", (ev) => {
    const holder = ev.target.closest(".has-tip");
    if (holder && !holder.closest("[data-action]:not(:disabled)") && performance.now() - lastTouch < 800) {
      $("tip").dataset.touch = "1";
      showTip(holder);
    } else if (!ev.target.closest("#tip") && !holder) {
      hideTip();
    }
  });
  window.addEventListener("scroll", hideTip, { passive: true });
}

// ------------------------------------------------------------------ rendering
function cardFace(card, opts = {}) {
  const cls = ["card", `fam-${card.family}`];
  if (opts.small) cls.push("small");
  return tipFor(el("div", { class: cls.join(" ") },
    el("div", { class: "card-head" },
      el("span", { class: "card-value", text: card.value }),
      el("span", { class: "card-name", text: card.name })),
    opts.small ? null : el("div", { class: "card-text", text: card.text }),
    opts.small || !card.keywords.length ? null : el("div", { class: "card-keywords", text: card.keywords.join(" · ") })), card, "living");
}

function cardBack(small, label = "face-down") {
  return el("div", { class: `card back${small ? " small" : ""}` }, el("span", { text: "?" }), el("span", { class: "back-label", text: label }));
}

function shadowFace(card, small) {
  return tipFor(el("div", { class: `shadow-card ${card.family}${small ? " small" : ""}` },
    el("div", { class: "shadow-name", text: card.name }),
    small ? null : el("div", { class: "card-text", text: card.text })), card, "shadow");
}

function pips(hp, max, alive) {
  if (!alive) return el("div", { class: "ghost-label", text: "☠ GHOST" });
  const out = [];
  for (let i = 0; i < max; i++) out.push(el("span", { class: `pip${i < hp ? " full" : ""}`, "aria-hidden": "true" }));
  return el("div", { class: "pips", title: `${hp} of ${max} HP`, "aria-label": `${hp} of ${max} HP` }, out, el("span", { class: "hp-num", text: `${hp}/${max}` }));
}

function seatBox(st, s) {
  const cls = ["seat"];
  if (!s.alive) cls.push("ghost");
  if (s.is_you) cls.push("you");
  if (s.deciding) cls.push("deciding");
  if (s.target_action !== null) cls.push("targetable");
  const head = el("div", { class: "seat-head" },
    el("span", { class: "seat-name", text: s.name }),
    s.first_player ? el("span", { class: "first", title: "First Player", text: "★" }) : null);
  const who = el("div", { class: "seat-who" },
    el("span", { class: "seat-bot", text: s.is_you ? "you" : s.controller }),
    s.level ? el("span", { class: `level lv-${shortLevel(s.level).toLowerCase()}`, title: s.level, text: shortLevel(s.level) }) : null);
  const info = el("div", { class: "seat-info" },
    el("span", { title: "Living cards in hand", text: `hand ${s.hand_count}` }),
    el("span", { title: "Shadow cards in hand", text: `shadow ${s.shadow_count}` }),
    s.took ? el("span", { class: "took", text: s.took === "deck" ? "took: deck" : `took: ${s.took_card ? s.took_card.name : "Market"}` }) : null);
  let played = null;
  if (s.played) {
    played = el("div", { class: "played" },
      s.played.card ? cardFace(s.played.card, { small: true }) : cardBack(true),
      s.target !== null ? el("span", { class: "target", text: `→ ${st.table.seats[s.target].name}` }) : null);
  } else if (s.has_acted && !s.deciding) {
    played = el("div", { class: "played none", text: s.alive ? "played nothing" : "" });
  }
  const haunt = s.haunted_by.length ? el("div", { class: "haunts" }, s.haunted_by.map((c) => shadowFace(c, true))) : null;
  const label = s.target_action !== null ? `Choose ${s.name}` : `${s.name}, ${s.is_you ? "you" : s.controller}`;
  const box = actionButton(cls.join(" "), s.target_action, label, head, who, pips(s.hp, s.max_hp, s.alive), info, played, haunt);
  box.dataset.seat = String(s.seat);
  return box;
}

// The board is drawn at a fixed design size and scaled to fit its frame.
function layoutBoard() {
  const frame = $("board-frame");
  const board = $("board");
  if (!state || $("game").hidden) return;
  const narrow = frame.clientWidth < 640;
  const crowded = state.players > 6;
  const W = narrow ? 480 : 960;
  const H = narrow ? (crowded ? 680 : 560) : 600;
  board.style.width = `${W}px`;
  board.style.height = `${H}px`;
  board.classList.toggle("narrow", narrow);
  const availH = narrow ? Infinity : frame.clientHeight;
  const scale = Math.min(frame.clientWidth / W, availH / H, 1.2);
  board.style.transform = `scale(${scale})`;
  board.style.left = `${Math.max(0, (frame.clientWidth - W * scale) / 2)}px`;
  if (narrow) frame.style.height = `${Math.ceil(H * scale)}px`;
  else frame.style.height = "";
  const dock = document.querySelector(".dock");
  document.documentElement.style.setProperty("--dock-h", `${(dock.offsetHeight || 0) + 12}px`);
}

function renderBoard(st) {
  const t = st.table;
  const n = st.players;
  const boxes = t.seats.map((s) => {
    const k = (s.seat - st.seat + n) % n; // you at the bottom, clockwise round the table
    const theta = Math.PI / 2 + (2 * Math.PI * k) / n;
    const box = seatBox(st, s);
    const narrow = $("board-frame").clientWidth < 640;
    box.style.left = `${50 + (narrow ? 37 : 40) * Math.cos(theta)}%`;
    box.style.top = `${50 + (narrow ? 41 : 38) * Math.sin(theta)}%`;
    if (n > 6) box.classList.add("crowded");
    return box;
  });
  $("ring").replaceChildren(...boxes);

  const market = t.market.map((m) => {
    const label = m.card ? `Take ${m.card.name} (${m.card.value}) from Market slot ${m.slot}` : `Market slot ${m.slot}: empty`;
    return actionButton("market-slot", m.action, label, m.card ? cardFace(m.card, { small: true }) : el("div", { class: "card empty small", text: "empty" }));
  });
  const deck = actionButton("deck", t.deck_action, "Take the top card of the Living Deck",
    el("div", { class: "card back small deck-card" }, el("span", { text: t.living_deck }), el("span", { class: "back-label", text: "Living Deck" })));
  const rule = st.active_rule || { name: t.rule, card: null, text: t.rule };
  const pill = el("div", { class: `rule${rule.name !== "none" ? " active" : ""}`, title: rule.text },
    rule.name === "none" ? "No rule change" : [el("strong", { text: rule.card && rule.card !== rule.name ? rule.card : rule.name }),
      rule.card && rule.card !== rule.name ? ` → ${rule.name}` : ""]);
  if (rule.name !== "none") {
    pill.dataset.tipName = rule.card ? `${rule.card} (rule)` : rule.name;
    pill.dataset.tipText = rule.text;
    pill.dataset.tipMeta = "the rule of this round";
    pill.classList.add("has-tip");
  }
  $("center").replaceChildren(
    pill,
    el("div", { class: "round", text: t.epilogue ? `Round ${st.round} · epilogue` : `Round ${st.round}` }),
    el("div", { class: "market-row" }, deck, el("div", { class: "market" }, el("div", { class: "market-label", text: "Market" }), el("div", { class: "market-cards" }, market))),
    el("div", { class: "piles", text: `discard ${t.living_discard} · Shadow Deck ${t.shadow_deck} · Shadow discard ${t.shadow_discard}` }),
  );
  layoutBoard();
}

function renderHand(st) {
  const over = st.status === "over";
  const hand = st.hand.map((c) => {
    const label = c.action !== null ? `Play ${c.name} (${c.value})` : `${c.name} (${c.value}), not playable now`;
    const btn = actionButton("hand-card", c.action, label, cardFace(c));
    if (c.count > 1) btn.append(el("span", { class: "count", text: `×${c.count}` }));
    if (c.face_down) btn.append(el("span", { class: "fd-badge", text: "face-down" }));
    return btn;
  });
  const me = st.table.seats[st.seat];
  $("hand").replaceChildren(...(hand.length ? hand : [el("p", { class: "muted", text: me.alive ? "No Living cards." : "Ghosts hold no Living cards." })]));
  $("hand-title").textContent = over ? "Your hand at the end" : me.alive ? "Your hand" : "Your Shadow hand (you are a Ghost)";
  // After the game the Shadow hand that was dealt is no longer news: it is not shown.
  const sh = over ? [] : st.shadow_hand.map((c) => {
    const btn = actionButton("hand-card shadow", c.action, `Haunt with ${c.name}`, shadowFace(c, false));
    if (c.count > 1) btn.append(el("span", { class: "count", text: `×${c.count}` }));
    return btn;
  });
  $("shadow-wrap").hidden = !sh.length;
  $("shadow-hand").replaceChildren(...sh);
}

function renderChoices(st) {
  const box = $("choices");
  if (st.status !== "your_turn") {
    box.replaceChildren(el("p", { class: "muted", text: st.status === "over" ? "The game is over." : "The bots are playing…" }));
    return;
  }
  box.closest(".choices-panel").scrollTop = 0;
  box.replaceChildren(...st.legal_actions.map((a, i) =>
    el("button", {
      type: "button", class: `choice kind-${a.kind}`, dataset: { action: String(a.action) },
      "aria-keyshortcuts": i < 9 ? String(i + 1) : null, onclick: () => act(a.action),
    }, el("span", { class: "num", text: `${i + 1}` }), el("span", { class: "choice-text", text: a.text }))));
}

function renderNotice(st) {
  // Your Ghost turns that passed by themselves while the bots played: say so.
  const skipped = (st.recent || []).filter((x) => x.type === "event" && x.seat === st.seat && x.forced && x.kind === "pass");
  const box = $("notice");
  if (!skipped.length) { box.hidden = true; box.replaceChildren(); return; }
  const rounds = [...new Set(skipped.map((x) => x.round))];
  box.hidden = false;
  box.replaceChildren(el("strong", { text: "While you waited: " }),
    `your Ghost turn${skipped.length > 1 ? "s" : ""} in round${rounds.length > 1 ? "s" : ""} ${rounds.join(", ")} ` +
    `passed by ${skipped.length > 1 ? "themselves" : "itself"}, since you held no Shadow card you could attach.`);
}

function logItem(st, e) {
  const cls = ["log-entry", `kind-${e.kind}`];
  if (e.seat === st.seat) cls.push("mine");
  return el("li", { class: cls.join(" ") }, e.text);
}

function nameOf(st, q) {
  const s = st.table.seats[q];
  return s.is_you ? "you" : `${s.name} (${s.controller})`;
}

function roundTable(st, r) {
  const rows = r.seats.map((s) => {
    const cells = [
      el("td", { text: s.seat === st.seat ? `${s.name} (you)` : `${s.name} · ${st.controllers[s.seat]}` }),
      el("td", {}, s.card ? tipFor(el("span", { class: "card-ref", text: `${s.card.name} (${s.card.value})` }), s.card, "living") : "–",
        s.revealed ? el("small", { text: " revealed" }) : null,
        s.target !== null ? el("small", { text: ` → player_${s.target}` }) : null,
        s.haunted_by.length ? el("small", { class: "haunt-note", text: ` · haunted: ${s.haunted_by.join(", ")}` }) : null),
      el("td", { class: "num", text: s.score === null ? "–" : s.score }),
      el("td", { class: `num${s.hp_lost ? " dmg" : ""}`, text: s.hp_lost ? `−${s.hp_lost}` : "0" }),
      el("td", { class: "num", text: s.died ? `${s.hp} ☠` : s.alive ? s.hp : "Ghost" }),
    ];
    return el("tr", { class: s.alive ? "" : "ghost-row" }, cells);
  });
  return el("table", { class: "round-table" },
    el("thead", {}, el("tr", {}, ["player", "card", "score", "HP lost", "HP"].map((h) => el("th", { text: h })))),
    el("tbody", {}, rows));
}

function storyList(r) {
  return el("ul", { class: "story" }, r.story.filter((x) => x.kind !== "scores").map((x) =>
    el("li", { class: `story-${x.kind}`, text: x.text })));
}

function renderLog(st, upto) {
  const log = upto === undefined ? st.log : upto;
  const items = log.map((e) => logItem(st, e));
  $("log-title").textContent = `Round ${st.round}${st.status === "over" ? " (ended mid-round)" : " so far"}`;
  $("log-panel").hidden = st.status === "over" && !items.length;
  $("log").replaceChildren(...(items.length ? items : [el("li", { class: "muted", text: "Nothing yet this round." })]));
  $("log").scrollTop = $("log").scrollHeight;
}

function renderRounds(st, count) {
  const list = st.rounds.slice(0, count === undefined ? st.rounds.length : count);
  const rounds = list.slice().reverse().map((r, i) => el("details", { class: "round-summary", open: i === 0 },
    el("summary", {}, `Round ${r.round}${r.epilogue ? " (epilogue)" : ""} · ${r.rule === "none" ? "no rule change" : r.rule_card && r.rule_card !== r.rule ? `${r.rule_card} → ${r.rule}` : r.rule}`),
    roundTable(st, r),
    storyList(r),
    el("details", { class: "round-log" }, el("summary", { text: "every move" }),
      el("ol", { class: "log small" }, r.events.map((e) => logItem(st, e))))));
  $("rounds").replaceChildren(...(rounds.length ? rounds : [el("p", { class: "muted", text: "No round resolved yet." })]));
}

// ------------------------------------------------------------------ banner (bot moves, round results)
function hideBanner() { $("banner").hidden = true; $("banner").replaceChildren(); }

function moveBanner(text, kind) {
  const b = $("banner");
  b.hidden = false;
  b.className = `banner move kind-${kind}`;
  b.replaceChildren(el("div", { class: "banner-move", text }),
    el("button", { type: "button", class: "ghost-button skip", text: "Skip ▸▸", onclick: () => { if (playback) playback.skip = true; } }));
}

function roundBanner(st, r) {
  const b = $("banner");
  b.hidden = false;
  b.className = "banner round-result";
  const scores = r.seats.filter((s) => s.score !== null).sort((a, c) => c.score - a.score);
  b.replaceChildren(
    el("div", { class: "banner-title", text: `Round ${r.round} result` + (r.rule !== "none" ? ` · ${r.rule_text}` : "") }),
    el("div", { class: "banner-scores" }, scores.map((s) => el("span", { class: `score-chip${s.hp_lost ? " hurt" : ""}${s.seat === st.seat ? " mine" : ""}` },
      el("strong", { text: s.score }), ` ${s.seat === st.seat ? "you" : s.name}`))),
    storyList(r),
    el("button", { type: "button", class: "primary", text: "Continue", onclick: () => { if (playback) playback.skip = true; hideBanner(); } }),
  );
}

// Show what happened since your decision one move at a time, then the new state.
async function playBack(st) {
  const items = st.recent || [];
  const ms = speed();
  const shownEvents = [];
  const roundsBefore = st.rounds.length - items.filter((x) => x.type === "round").length;
  let roundsShown = roundsBefore;
  let lastRound = null;
  playback = { skip: ms === 0 };
  document.body.dataset.status = "playing";
  renderChoices({ ...st, status: "waiting" });
  for (const x of items) {
    if (playback.skip) break;
    if (x.type === "event") {
      if (x.kind === "round_start") { shownEvents.length = 0; }
      shownEvents.push(x);
      renderLog(st, shownEvents);
      if (SHOWN.has(x.kind) && x.seat !== st.seat) {
        moveBanner(x.text, x.kind);
        await sleep(ms);
      }
    } else if (x.type === "round") {
      roundsShown = x.index + 1;
      lastRound = st.rounds[x.index];
      renderRounds(st, roundsShown);
      roundBanner(st, lastRound);
      const until = performance.now() + Math.max(4 * ms, 1200);
      while (!playback.skip && !$("banner").hidden && performance.now() < until) await sleep(50);
    }
  }
  // the last round's result stays on screen until you act or close it
  const skipped = playback.skip;
  playback = null;
  if (lastRound && (skipped || !$("banner").hidden)) roundBanner(st, lastRound);
  else hideBanner();
}

async function show(st, animate = true) {
  state = st;
  $("setup").hidden = true;
  $("game").hidden = false;
  $("new-game").hidden = false;
  const me = st.table.seats[st.seat];
  decisionNumber = st.decision_number;
  // A secret seed is 128 bits (more than a JavaScript number holds): the record shows it.
  const seed = st.practice ? `practice game, seed ${st.seed}` : "secret seed";
  setStatus(`${st.players} players · ${seed} · round ${st.round}`);
  renderBoard(st);
  renderHand(st);
  renderNotice(st);
  if (animate && (st.recent || []).length) await playBack(st);
  else hideBanner();
  let prompt;
  if (st.status === "over") prompt = "The game is over.";
  else if (st.status === "your_turn") prompt = `${me.alive ? "" : "You are a Ghost. "}Your decision: ${st.decision.prompt}.`;
  else prompt = `Waiting for ${st.decision.name}…`;
  $("prompt").textContent = prompt;
  $("prompt").className = `prompt ${st.status}`;
  renderChoices(st);
  renderLog(st);
  renderRounds(st);
  renderResult(st);
  layoutBoard();
  document.body.dataset.status = st.status;
}

function renderResult(st) {
  const box = $("result");
  const res = st.result;
  if (!res) { box.hidden = true; box.replaceChildren(); return; }
  const mine = res.standings.find((x) => x.seat === st.seat);
  const headline = res.you_won ? (res.winners.length === 1 ? "You win!" : "You share the win!")
    : `You finish ${mine ? mine.place_text : ""}`;
  const winners = res.winners.map((q) => nameOf(st, q)).join(" and ") || "nobody";
  const rows = res.standings.map((x) => el("tr", { class: `${x.winner ? "winner" : ""}${x.seat === st.seat ? " mine" : ""}` },
    el("td", { class: "place", text: x.place_text }),
    el("td", {}, el("strong", { text: x.seat === st.seat ? "you" : x.name.replace(/ \(.*\)$/, "") }),
      x.seat === st.seat ? null : el("span", { class: "muted", text: ` ${x.controller}` }),
      x.level ? el("span", { class: `level lv-${shortLevel(x.level).toLowerCase()}`, text: shortLevel(x.level) }) : null),
    el("td", { text: x.winner ? "winner" : x.died_round ? `out in round ${x.died_round}` : x.alive ? "alive" : "—" }),
    el("td", { class: "how", text: x.winner ? (x.alive ? `survived with ${x.hp} HP` : "died last") : x.how || "" })));
  box.hidden = false;
  box.className = `result-overlay ${res.you_won ? "won" : "lost"}`;
  box.replaceChildren(el("div", { class: "result-card" },
    el("h2", { id: "result-title", text: headline }),
    el("p", { class: "result-sub", text: `Game over after ${res.rounds} round${res.rounds === 1 ? "" : "s"}: ` +
      `${res.end.replace(/^Game over: /, "")}. Winner: ${winners}.` }),
    el("table", { class: "standings" },
      el("thead", {}, el("tr", {}, ["place", "player", "", "how it ended"].map((h) => el("th", { text: h })))),
      el("tbody", {}, rows)),
    el("div", { class: "result-actions" },
      el("button", { type: "button", class: "primary", onclick: showSetup, text: "Play again" }),
      el("button", { type: "button", class: "ghost-button", onclick: () => { box.hidden = true; }, text: "See the table" }),
      el("a", { class: "button", href: "#", download: `ripmarket-${game.id}.jsonl`, onclick: downloadRecord, text: "Download the game record" }))));
}

// ------------------------------------------------------------------ keyboard
function onKey(ev) {
  if (ev.target.closest && ev.target.closest("input, select, textarea")) return;
  if (ev.key === "Escape") { hideTip(); if (playback) playback.skip = true; else hideBanner(); return; }
  if (playback && (ev.key === " " || ev.key === "Enter")) { playback.skip = true; ev.preventDefault(); return; }
  if (!/^[1-9]$/.test(ev.key) || !state || state.status !== "your_turn" || busy) return;
  const a = state.legal_actions[Number(ev.key) - 1];
  if (a) { ev.preventDefault(); act(a.action); }
}

// ------------------------------------------------------------------ start
async function boot() {
  $("speed").value = localStorage.getItem(SPEED) || "450";
  $("speed").addEventListener("change", () => localStorage.setItem(SPEED, $("speed").value));
  $("new-game").addEventListener("click", async () => {
    if (game && document.body.dataset.status !== "over") {
      if (!window.confirm("Leave this game and set up a new one?")) return;
      try { await api("DELETE", gamePath()); } catch (e) { /* already gone */ }
      forgetGame(game.id);
    }
    showSetup();
  });
  document.addEventListener("keydown", onKey);
  window.addEventListener("resize", layoutBoard);
  wireTips();
  try {
    const listing = await api("GET", "/api/bots");
    bots = listing.bots;
    if (listing.default_opponents && listing.default_opponents.length) DEFAULT_BOTS = listing.default_opponents;
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
      await show(await api("GET", gamePath()), false);
      return;
    } catch (e) {
      showSetup();
    }
  }
  // Say so while the server is still loading the engine or a bot (ripmarket serve warms up at start).
  try {
    const s = await api("GET", "/api/status");
    if (s.stage) {
      setStatus(`Getting ready: ${s.stage}…`);
      const poll = setInterval(async () => {
        try {
          const t = await api("GET", "/api/status");
          if (document.body.dataset.status !== "setup") { clearInterval(poll); return; }
          setStatus(t.stage ? `Getting ready: ${t.stage}… (${t.done}/${t.total})` : "Ready.");
          if (!t.stage) clearInterval(poll);
        } catch (e) { clearInterval(poll); }
      }, 700);
    }
  } catch (e) { /* status is optional */ }
}

boot();
