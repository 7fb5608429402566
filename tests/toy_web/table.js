// The toy game's page plugin (GameSpec.web): it proves a game can add its own drawing to the
// generic page. It marks each seat with a pip per seat number, shows each choice's card
// value as a big number, and adds a banner once per draw.
RipmarketTable.register("toy", {
  css: ".toy-pips { color: var(--gold); } .toy-big { font-size: 20px; font-weight: 700; margin-right: .3em; }",
  seat(box, seat) {
    const pips = document.createElement("div");
    pips.className = "toy-pips";
    pips.textContent = "o".repeat(seat.seat + 1);
    box.append(pips);
  },
  choice(button, choice) {
    const big = document.createElement("span");
    big.className = "toy-big";
    big.textContent = choice.text.replace(/\D/g, "");
    button.prepend(big);
  },
  render(root, view) {
    let banner = document.getElementById("toy-banner");
    if (!banner) { banner = document.createElement("p"); banner.id = "toy-banner"; root.prepend(banner); }
    banner.textContent = `Pairs for ${view.players}`;
  },
});
