// The Rune Market page: start a game and draw the table as your seat sees it (the view's
// `board`: the Market, every seat's Shelters with their Runes, Boat Shelters and Bandits,
// hand sizes and scores, your hand as cards); your decisions are buttons (keys 1-9); a
// bot's attack on you comes back at once as a block decision under a red banner; the
// game ends on a standings table.
(function () {
  "use strict";
  var game = null, token = null;
  var $ = function (id) { return document.getElementById(id); };

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

  function show(v) {
    game = v;
    $("error").textContent = "";
    $("loading").hidden = true;
    $("setup").hidden = true;
    $("game").hidden = false;
    var ul = $("recent"); ul.innerHTML = "";
    v.recent.forEach(function (t) { ul.appendChild(el("li", "", t)); });
    ul.scrollTop = ul.scrollHeight;
    drawMarket(v.board);
    drawSeats(v.board);
    drawHand(v.board);
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
    call("POST", "/api/rune/games/" + game.game_id + "/actions", {action: action, decision_number: game.decision_number})
      .then(show)
      .catch(function (e) { $("error").textContent = e.message; buttons.forEach(function (b) { b.disabled = false; }); });
  }

  $("players").addEventListener("change", setSeats);
  $("setup").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var wait = $("loading");
    wait.hidden = false;
    wait.textContent = "Dealing the cards\u2026 (the first game after an install compiles the game engine, and the first " +
      "against rm-search its search, or rm-ppo-4p loads its network: up to a minute)";
    $("start").disabled = true;
    call("POST", "/api/rune/games", {players: +$("players").value, seat: +$("seat").value,
                                     opponents: $("opponents").value.split(",")})
      .then(function (v) { token = v.seat_token; show(v); })
      .catch(function (e) { wait.hidden = true; $("start").disabled = false; $("error").textContent = e.message; });
  });
  document.addEventListener("keydown", function (ev) {
    if (!game || game.over || ev.ctrlKey || ev.metaKey || ev.altKey || !/^[1-9]$/.test(ev.key)) return;
    var c = game.choices[+ev.key - 1];
    if (c && !$("choices").querySelector("button:disabled")) { ev.preventDefault(); answer(c.action); }
  });
  setSeats();
})();
