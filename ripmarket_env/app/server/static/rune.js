// The Rune Market page: start a game, show the table as your seat sees it, ask your
// decisions; a bot's attack on you comes back as a block decision under a red banner.
(function () {
  "use strict";
  var game = null, token = null;
  var $ = function (id) { return document.getElementById(id); };

  function setSeats() {
    var n = +$("players").value, sel = $("seat"), keep = +sel.value;
    sel.innerHTML = "";
    for (var q = 0; q < n; q++) {
      var o = document.createElement("option"); o.value = q; o.textContent = "P" + q; sel.appendChild(o);
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

  function show(v) {
    game = v;
    $("error").textContent = "";
    $("setup").hidden = true;
    $("game").hidden = false;
    $("table").textContent = v.table;
    var ul = $("recent"); ul.innerHTML = "";
    v.recent.forEach(function (t) { var li = document.createElement("li"); li.textContent = t; ul.appendChild(li); });
    var p = $("prompt");
    p.textContent = v.prompt;
    p.className = v.blocking ? "block" : "";
    var box = $("choices"); box.innerHTML = "";
    v.choices.forEach(function (c) {
      var b = document.createElement("button");
      b.type = "button"; b.textContent = c.number + ". " + c.text; b.dataset.action = c.action;
      b.addEventListener("click", function () { answer(c.action); });
      box.appendChild(b);
    });
    if (v.over) {
      var r = v.result;
      $("result").textContent = "Game over: " + (r.you_won ? "you win" : "you lose") +
        "; winner(s): " + r.winners.map(function (q) { return v.seats[q]; }).join(", ") + "; scores " + r.scores.join(", ");
    }
    document.body.dataset.status = v.over ? "over" : (v.blocking ? "blocking" : "deciding");
    if (v.blocking && box.firstChild) box.firstChild.focus();
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
    call("POST", "/api/rune/games", {players: +$("players").value, seat: +$("seat").value})
      .then(function (v) { token = v.seat_token; show(v); })
      .catch(function (e) { $("error").textContent = e.message; });
  });
  document.addEventListener("keydown", function (ev) {
    if (!game || game.over || !/^[1-9]$/.test(ev.key)) return;
    var c = game.choices[+ev.key - 1];
    if (c) answer(c.action);
  });
  setSeats();
})();
