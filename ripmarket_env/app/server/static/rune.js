// The Rune Market page: start a game and draw the table as your seat sees it (the view's
// `board`: the Market, every seat's Shelters with their Runes, Boat Shelters and Bandits,
// hand sizes and scores, your hand as cards); your decisions are buttons (keys 1-9); a
// bot's attack on you comes back at once as a block decision under a red banner; the
// game ends on a standings table. What happened since your decision (the view's `moves`,
// each told in one sentence) is played back one move at a time in a banner over the
// table, at the speed picked in the header (stored in localStorage "rune.speed"; 0 shows
// the end state at once), before your next decision is offered.
(function () {
  "use strict";
  var game = null, token = null, playing = null;
  var SPEED = "rune.speed";
  var $ = function (id) { return document.getElementById(id); };
  var sleep = function (ms) { return new Promise(function (r) { setTimeout(r, ms); }); };
  var speed = function () { return +$("speed").value; };

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function setSeats() {
    var n = +$("players").value, sel = $("seat"), keep = +sel.value;
    sel.innerHTML = "";
    for (var q = 0; q < n; q++) {
      var o = el("option", "", "P" + q); o.value = q; sel.appendChild(o);
    }
    sel.value = Math.min(keep, n - 1);
  }

  function call(method, url, body) {
    var headers = {"Content-Type": "application/json"};
    if (token) headers["X-Seat-Token"] = token;
    return fetch(url, {method: method, headers: headers, body: body ? JSON.stringify(body) : undefined})
      .then(function (r) {
        return r.json().then(function (j) {
          if (!r.ok) throw new Error(j.detail || ("HTTP " + r.status));
          return j;
        });
      });
  }

  // Card text on hover (title) and on tap or click (the line under your hand).
  function explain(node, name, text) {
    node.title = name + ": " + text;
    node.tabIndex = 0;
    node.setAttribute("role", "button");
    node.addEventListener("click", function () {
      var open = node.classList.contains("open");
      document.querySelectorAll(".card.open, .explained.open").forEach(function (n) { n.classList.remove("open"); });
      $("cardinfo").textContent = open ? "" : name + ": " + text;
      if (!open) node.classList.add("open");
    });
  }

  function runes(parent, colour, n) {
    if (n > 8) { parent.appendChild(el("span", "rune " + colour)); parent.appendChild(document.createTextNode("\u00d7" + n)); return; }
    for (var i = 0; i < n; i++) parent.appendChild(el("span", "rune " + colour));
  }

  function drawMarket(b) {
    var box = $("market"); box.innerHTML = "";
    box.appendChild(el("span", "label", "Market"));
    var cards = {};
    b.market.cards.forEach(function (c) { cards[c.id] = c; });
    [["red", "red_rune"], ["blue", "blue_rune"]].forEach(function (p) {
      var s = el("span", "explained");
      s.appendChild(el("span", "rune " + p[0]));
      s.appendChild(document.createTextNode(" " + b.market[p[0]] + " " + cards[p[1]].name + "s"));
      explain(s, cards[p[1]].name, cards[p[1]].text);
      box.appendChild(s);
    });
    var boats = el("span", "explained", b.market.boats + " Boat Shelter" + (b.market.boats === 1 ? "" : "s"));
    explain(boats, cards.boat_shelter.name, cards.boat_shelter.text);
    box.appendChild(boats);
    var bandits = el("span", "explained", b.market.bandits + " Bandit" + (b.market.bandits === 1 ? "" : "s") +
      (b.market.bandits_out ? " (" + b.market.bandits_out + " out)" : ""));
    explain(bandits, cards.bandit.name, cards.bandit.text);
    box.appendChild(bandits);
    box.appendChild(el("span", "pile", "draw pile " + b.draw_pile + " · discard " + b.discard_pile + " · turn " + b.turn));
  }

  function drawSeats(b) {
    var box = $("seats"); box.innerHTML = "";
    b.seats.forEach(function (s) {
      var d = el("div", "seat" + (s.you ? " you" : "") + (s.acting ? " acting" : "") + (s.winner ? " winner" : ""));
      d.dataset.seat = s.seat;
      d.appendChild(el("div", "who", (s.you ? "You (P" + s.seat + ")" : "P" + s.seat + " · " + s.bot) +
        (s.turn_player ? (s.you ? " · your turn" : " · their turn") : "") + (s.winner ? " · winner" : "")));
      if (s.level) d.appendChild(el("div", "level", s.level));
      d.appendChild(el("div", "stats", s.score + " Rune" + (s.score === 1 ? "" : "s") + " · " + s.hand_size +
        " card" + (s.hand_size === 1 ? "" : "s") + " in hand" + (s.attacked ? " · attacked" : "")));
      var row = el("div", "shelters");
      s.shelters.forEach(function (sh) {
        var c = el("div", "shelter " + sh.colour + (sh.present ? " present" : ""));
        var name = sh.colour === "red" ? "Red" : "Blue";
        if (!sh.present) { c.textContent = "no " + name + " Shelter"; row.appendChild(c); return; }
        c.appendChild(el("div", "", name + " Shelter"));
        var dots = el("div"); runes(dots, sh.colour, sh.runes); c.appendChild(dots);
        if (sh.boat) c.appendChild(el("span", "tag boat", "Boat"));
        if (sh.bandit) c.appendChild(el("span", "tag bandit", "Bandit of " + sh.bandit.owner_name + " " +
          sh.bandit.paid + "/" + sh.bandit.removal));
        row.appendChild(c);
      });
      d.appendChild(row);
      if (s.loose.red || s.loose.blue) {
        var l = el("div", "loose", "loose: ");
        runes(l, "red", s.loose.red); runes(l, "blue", s.loose.blue);
        d.appendChild(l);
      }
      box.appendChild(d);
    });
  }

  function drawHand(b) {
    var box = $("hand"); box.innerHTML = "";
    $("handtitle").textContent = "Your hand (" + b.hand.length + " card" + (b.hand.length === 1 ? "" : "s") + "; tap a card for its text)";
    $("cardinfo").textContent = "";
    b.hand.forEach(function (c) {
      var d = el("div", "card " + (c.kind === "number" ? "number" : c.kind === "theft" ? "theft" : c.colour));
      if (c.kind === "number") { d.appendChild(el("span", "v", String(c.value))); d.appendChild(el("span", "", "Number")); }
      else d.appendChild(el("span", "", c.name));
      explain(d, c.name, c.text);
      box.appendChild(d);
    });
  }

  function drawResult(v) {
    var box = $("result"); box.innerHTML = "";
    if (!v.over) return;
    var r = v.result;
    var names = r.winners.map(function (q) { return q === v.seat ? "you" : v.seats[q]; }).join(" and ");
    box.appendChild(el("h2", "", "Game over: " + (r.you_won ? (r.winners.length > 1 ? "you share the win" : "you win") :
      "you lose") + " (winner: " + names + ")"));
    var t = el("table"), head = el("tr");
    ["Place", "Player", "Runes", "Turns"].forEach(function (h) { head.appendChild(el("th", "", h)); });
    t.appendChild(head);
    r.standings.forEach(function (s) {
      var tr = el("tr", s.seat === v.seat ? "you" : "");
      [String(s.place) + (s.winner ? " \u2605" : ""), s.seat === v.seat ? "you" : s.name, String(s.score),
       String(s.turns)].forEach(function (x) { tr.appendChild(el("td", "", x)); });
      t.appendChild(tr);
    });
    box.appendChild(t);
    box.appendChild(el("p", "pile", "Seed " + v.seed_text + ". Ties go to the player who took fewer turns."));
  }

  function logMove(m, v) {
    var ul = $("recent");
    ul.appendChild(el("li", (m.seat === v.seat ? "mine" : "") + (m.minor ? " minor" : ""), m.text));
    ul.scrollTop = ul.scrollHeight;
  }

  // The bots' moves since your decision, one at a time: each in the banner for speed()
  // ms and added to the log; the table is drawn at its new state meanwhile, the choices
  // wait. Skip (or Escape, or the speed "instant") shows the rest at once.
  function playBack(v) {
    $("recent").innerHTML = "";
    var moves = v.moves || [];
    var shown = moves.filter(function (m) { return m.seat !== v.seat && !m.minor; });
    var state = {skip: speed() <= 0 || !shown.length};
    playing = state;
    document.body.dataset.status = "playing";
    $("prompt").textContent = shown.length ? "The bots are playing\u2026" : "";
    $("prompt").className = "";
    $("choices").innerHTML = "";
    $("result").innerHTML = "";
    var banner = $("banner");
    var i = 0;
    function next() {
      while (i < moves.length) {
        var m = moves[i++];
        logMove(m, v);
        if (state.skip || m.seat === v.seat || m.minor) continue;
        banner.hidden = false;
        banner.className = "banner kind-" + m.kind;
        banner.innerHTML = "";
        banner.appendChild(el("div", "banner-result", m.text));
        var skip = el("button", "skip", "Skip \u25b8\u25b8");
        skip.type = "button";
        skip.addEventListener("click", function () { state.skip = true; });
        banner.appendChild(skip);
        return sleep(speed()).then(next);
      }
      banner.hidden = true;
      if (playing === state) playing = null;
      return Promise.resolve();
    }
    return next();
  }

  function show(v) {
    game = v;
    $("error").textContent = "";
    $("loading").hidden = true;
    $("setup").hidden = true;
    $("game").hidden = false;
    drawMarket(v.board);
    drawSeats(v.board);
    drawHand(v.board);
    return playBack(v).then(function () { if (game === v) offer(v); });
  }

  // Your decision (or the end screen), once the bots' moves are shown.
  function offer(v) {
    drawResult(v);
    $("handbox").hidden = v.over;
    var p = $("prompt");
    p.textContent = v.prompt;
    p.className = v.blocking ? "block" : "";
    var box = $("choices"); box.innerHTML = "";
    v.choices.forEach(function (c) {
      var b = el("button");
      b.type = "button"; b.dataset.action = c.action;
      if (c.number <= 9) b.appendChild(el("kbd", "", String(c.number)));
      b.appendChild(document.createTextNode(c.text));
      b.addEventListener("click", function () { answer(c.action); });
      box.appendChild(b);
    });
    document.body.dataset.status = v.over ? "over" : (v.blocking ? "blocking" : "deciding");
    $("dock").scrollTop = 0;
    if (v.blocking && box.firstChild) box.firstChild.focus({preventScroll: true});
  }

  function answer(action) {
    var buttons = $("choices").querySelectorAll("button");
    buttons.forEach(function (b) { b.disabled = true; });
    call("POST", "/api/rune-market/games/" + game.game_id + "/actions", {action: action, decision_number: game.decision_number})
      .then(show)
      .catch(function (e) { $("error").textContent = e.message; buttons.forEach(function (b) { b.disabled = false; }); });
  }

  $("players").addEventListener("change", setSeats);
  $("setup").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var wait = $("loading");
    wait.hidden = false;
    wait.textContent = "Dealing the cards\u2026";
    $("start").disabled = true;
    var players = +$("players").value;
    // one name per other seat at most (the server refuses more); a shorter list is repeated
    var opponents = $("opponents").value.split(",").slice(0, Math.max(players - 1, 1));
    var polling = true, t0 = performance.now();
    (function poll() {  // what the server is loading meanwhile (GET /api/rune-market/status)
      if (!polling) return;
      fetch("/api/rune-market/status?bots=" + encodeURIComponent(opponents.join(",")))
        .then(function (r) { return r.json(); })
        .then(function (st) {
          if (!polling) return;
          var secs = Math.round((performance.now() - t0) / 1000);
          if (st.stage) wait.textContent = st.stage + "\u2026 (" + secs + " s so far)";
          setTimeout(poll, 500);
        })
        .catch(function () { /* the game's own answer reports any failure */ });
    })();
    call("POST", "/api/rune-market/games", {players: players, seat: +$("seat").value, opponents: opponents})
      .then(function (v) { polling = false; token = v.seat_token; show(v); })
      .catch(function (e) {
        polling = false; wait.hidden = true; $("start").disabled = false; $("error").textContent = e.message;
      });
  });
  (function () {  // a stored speed that is not one of the options (a test's) gets its own
    var ms = localStorage.getItem(SPEED), sel = $("speed");
    if (ms && /^\d+$/.test(ms) && !sel.querySelector('option[value="' + ms + '"]')) {
      var o = el("option", "", ms + " ms"); o.value = ms; sel.appendChild(o);
    }
    sel.value = ms && sel.querySelector('option[value="' + ms + '"]') ? ms : "700";
  })();
  $("speed").addEventListener("change", function () { localStorage.setItem(SPEED, $("speed").value); });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "Escape" && playing) { playing.skip = true; return; }
    if (!game || game.over || playing || ev.ctrlKey || ev.metaKey || ev.altKey || !/^[1-9]$/.test(ev.key)) return;
    var c = game.choices[+ev.key - 1];
    if (c && !$("choices").querySelector("button:disabled")) { ev.preventDefault(); answer(c.action); }
  });
  setSeats();
})();
