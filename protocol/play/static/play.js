// damka play: the page. It draws what the server sends and sends back what is clicked; the
// rules live in the engine only (the legal moves arrive with every state, full paths included).
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const CELL = 100;
const STORE_KEY = "damka.play";
const PREFS_KEY = "damka.prefs";
const ENGINE_DELAY_MS = 250; // let the human see their own move land first

const S = {
  game: null,       // the last state from the server
  variants: [],
  defaults: {},     // the server's settings for a game without any (a first visit)
  selected: null,   // origin square of the piece being moved
  steps: [],        // landing squares clicked so far in a multi-capture
  busy: false,      // a move request is on its way
  thinking: false,  // the computer is thinking
  flip: false,      // the user turned the board round
  numbers: false,
  drag: null,
};

const $ = (id) => document.getElementById(id);

// -- server ------------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, code, message) { super(message); this.status = status; this.code = code; }
}

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, options);
  } catch (e) {
    throw new ApiError(0, "network", "The server does not answer (is damka play still running?)");
  }
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    const err = (data && data.error) || { code: "http", message: `HTTP ${response.status}` };
    throw new ApiError(response.status, err.code, err.message);
  }
  return data;
}

// -- keeping the game over a reload ---------------------------------------------------------------

function settingsOf(game) {
  return {
    variant: game.variant.name,
    forced_capture: game.variant.forced_capture,
    opponent: game.opponent,
    level: game.level,
    human: game.human || undefined,
  };
}

function remember(game) {
  const record = { id: game.id, settings: settingsOf(game), start_fen: game.start_fen, moves: game.moves };
  try { localStorage.setItem(STORE_KEY, JSON.stringify(record)); } catch (e) { /* private mode */ }
}

function recalled() {
  try { return JSON.parse(localStorage.getItem(STORE_KEY) || "null"); } catch (e) { return null; }
}

function savePrefs() {
  try { localStorage.setItem(PREFS_KEY, JSON.stringify({ numbers: S.numbers })); } catch (e) { /* ignore */ }
}

function loadPrefs() {
  try {
    const p = JSON.parse(localStorage.getItem(PREFS_KEY) || "{}");
    S.numbers = !!p.numbers;
  } catch (e) { /* ignore */ }
}

// -- state -----------------------------------------------------------------------------------------

function apply(game, { force = false } = {}) {
  const old = S.game;
  if (!force && old && game.id !== old.id) return false;             // an answer for a game we left
  if (!force && old && game.version < old.version) return false;     // an older answer came late
  if (!old || old.id !== game.id || old.version !== game.version) {
    S.selected = null;
    S.steps = [];
  }
  if (!old || old.id !== game.id) S.flip = false;
  S.game = game;
  remember(game);
  showError(null);
  render();
  return true;
}

function humanToMove(game = S.game) {
  if (!game || game.result) return false;
  return game.opponent === "friend" || game.turn === game.human;
}

function movesFrom(origin) {
  return S.game.legal.filter((m) => m.path[0] === origin);
}

function movableOrigins() {
  if (!humanToMove() || S.busy || S.thinking) return new Set();
  return new Set(S.game.legal.map((m) => m.path[0]));
}

// the moves that still fit the squares clicked so far
function candidates() {
  if (!S.selected) return [];
  return movesFrom(S.selected).filter((m) => S.steps.every((sq, i) => m.path[i + 1] === sq));
}

// -- clicking --------------------------------------------------------------------------------------

function handleSquare(name) {
  if (!humanToMove() || S.busy || S.thinking) return;
  const origins = movableOrigins();
  if (!S.selected) {
    if (origins.has(name)) select(name);
    return;
  }
  if (name === S.selected && S.steps.length === 0) return; // the piece picked up again
  const fitting = candidates();
  const k = S.steps.length + 1;
  const through = fitting.filter((m) => m.path.length > k && m.path[k] === name);
  let chosen = null;
  if (through.length) {
    const ending = through.filter((m) => m.path.length === k + 1);
    if (through.length === 1) chosen = through[0];
    else if (ending.length === through.length) chosen = ending[0];
    else { S.steps = S.steps.concat([name]); render(); return; }
  } else {
    const ending = fitting.filter((m) => m.to === name);
    if (ending.length === 1) chosen = ending[0];
    else if (ending.length > 1) {
      showError("Several captures end on that square: click the landing squares one by one.");
      return;
    }
  }
  if (chosen) { play(chosen); return; }
  if (origins.has(name)) { select(name); return; }
  S.selected = null; S.steps = []; render();
}

function select(name) {
  S.selected = name;
  S.steps = [];
  showError(null);
  render();
}

async function play(move) {
  S.busy = true;
  S.selected = null; S.steps = [];
  // show the move at once; the server's answer replaces this picture
  const pieces = Object.assign({}, S.game.pieces);
  const piece = pieces[move.from];
  delete pieces[move.from];
  move.captured.forEach((sq) => delete pieces[sq]);
  pieces[move.to] = piece;
  render(pieces);
  try {
    const game = await api("POST", `/api/games/${S.game.id}/move`, { path: move.path });
    S.busy = false;
    apply(game);
  } catch (e) {
    S.busy = false;
    showError(e.message);
    await refresh();
    return;
  }
  if (S.game.computer_to_move) {
    setTimeout(() => engineMove(S.game.id), ENGINE_DELAY_MS);
  }
}

async function engineMove(id) {
  if (!S.game || S.game.id !== id || !S.game.computer_to_move || S.thinking) return;
  S.thinking = true;
  render();
  try {
    const game = await api("POST", `/api/games/${id}/engine`);
    S.thinking = false;
    if (!apply(game)) render();
  } catch (e) {
    S.thinking = false;
    if (S.game && S.game.id === id) {
      if (e.status !== 409) showError(e.message);
      await refresh();
    }
  }
}

async function refresh() {
  if (!S.game) return;
  try { apply(await api("GET", `/api/games/${S.game.id}`), { force: true }); } catch (e) { render(); }
}

async function takeBack() {
  if (!S.game || S.busy) return;
  S.busy = true;
  try {
    const game = await api("POST", `/api/games/${S.game.id}/takeback`);
    S.busy = false;
    S.thinking = false;
    apply(game, { force: true });
    if (S.game.computer_to_move) engineMove(S.game.id);
  } catch (e) {
    S.busy = false;
    showError(e.message);
  }
}

async function newGame(request) {
  S.busy = true;
  try {
    const game = await api("POST", "/api/games", request);
    S.busy = false;
    S.thinking = false;
    apply(game, { force: true });
    if (S.game.computer_to_move) setTimeout(() => engineMove(S.game.id), ENGINE_DELAY_MS);
    return true;
  } catch (e) {
    S.busy = false;
    showError(e.message);
    render();
    return false;
  }
}

function menuRequest() {
  const opponent = $("opponent").value;
  const request = {
    variant: $("variant").value,
    forced_capture: !$("house").checked,
    opponent: opponent === "friend" ? "friend" : "computer",
    level: opponent === "friend" ? (S.game ? S.game.level : S.defaults.level) : opponent,
    human: $("side").value,
  };
  const v = S.variants.find((x) => x.name === request.variant);
  if (v && !v.house_rule) request.forced_capture = true;
  return request;
}

// -- drawing ---------------------------------------------------------------------------------------

function el(name, attrs, parent) {
  const node = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

function blackAtBottom() {
  const bottomBlack = S.game.bottom === "black";
  return S.flip ? !bottomBlack : bottomBlack;
}

function place(square, size) {
  const turned = blackAtBottom();
  return {
    x: (turned ? size - 1 - square.col : square.col) * CELL,
    y: (turned ? size - 1 - square.row : square.row) * CELL,
  };
}

function drawPiece(parent, code, cx, cy, extraClass) {
  const colour = code.toLowerCase() === "w" ? "white" : "black";
  const g = el("g", { class: `piece ${colour}${code === code.toUpperCase() ? " king" : ""}${extraClass ? " " + extraClass : ""}`,
                      "data-piece": code }, parent);
  el("circle", { class: `body ${colour}`, cx, cy, r: 36 }, g);
  el("circle", { class: `ring ${colour}`, cx, cy, r: 26 }, g);
  if (code === code.toUpperCase()) {
    const points = [[-20, 12], [-24, -12], [-10, 0], [0, -18], [10, 0], [24, -12], [20, 12]]
      .map(([dx, dy]) => `${cx + dx},${cy + dy}`).join(" ");
    el("polygon", { class: `crown ${colour}`, points }, g);
  }
  return g;
}

function render(piecesOverride) {
  const game = S.game;
  if (!game) return;
  const svg = $("board");
  const size = game.variant.size;
  svg.setAttribute("viewBox", `0 0 ${size * CELL} ${size * CELL}`);
  svg.setAttribute("data-variant", game.variant.name);
  svg.setAttribute("data-bottom", blackAtBottom() ? "black" : "white");
  svg.classList.toggle("thinking", S.thinking);
  svg.setAttribute("data-ply", String(game.ply));
  // what the page is doing, for people (the cursor) and for the end-to-end tests
  document.body.dataset.state = game.result ? "over"
    : (S.thinking || game.computer_to_move) ? "thinking" : S.busy ? "busy" : "ready";
  while (svg.firstChild) svg.removeChild(svg.firstChild);

  el("rect", { class: "light", x: 0, y: 0, width: size * CELL, height: size * CELL }, svg);
  const pieces = piecesOverride || game.pieces;
  const origins = piecesOverride ? new Set() : movableOrigins();
  const fitting = piecesOverride ? [] : candidates();
  const k = S.steps.length + 1;
  const nextSquares = new Set(fitting.filter((m) => m.path.length > k).map((m) => m.path[k]));
  const finalSquares = new Set(fitting.map((m) => m.to));
  const lastPath = new Set(game.last_move && !piecesOverride ? game.last_move.path : []);
  const forced = game.capture_forced && !piecesOverride && humanToMove() && !S.busy && !S.thinking;

  for (const square of game.squares) {
    const { x, y } = place(square, size);
    const name = square.name;
    const g = el("g", { class: "square", "data-square": name }, svg);
    el("rect", { class: "dark", x, y, width: CELL, height: CELL }, g);
    if (lastPath.has(name)) el("rect", { class: "lastmove", x, y, width: CELL, height: CELL }, g);
    if (name === S.selected) el("rect", { class: "selected", x, y, width: CELL, height: CELL }, g);
    if (S.steps.includes(name)) el("rect", { class: "stepped", x, y, width: CELL, height: CELL }, g);
    if (S.numbers) {
      const label = el("text", { class: "number", x: x + 4, y: y + 17 }, g);
      label.textContent = name;
    }
    const code = pieces[name];
    if (code) {
      drawPiece(g, code, x + CELL / 2, y + CELL / 2);
      if (forced && origins.has(name)) {
        el("circle", { class: "forced", cx: x + CELL / 2, cy: y + CELL / 2, r: 45 }, g);
      }
    }
    if (nextSquares.has(name)) {
      el("circle", { class: "target", cx: x + CELL / 2, cy: y + CELL / 2, r: 13 }, g);
    } else if (finalSquares.has(name)) {
      el("circle", { class: "target final", cx: x + CELL / 2, cy: y + CELL / 2, r: 20 }, g);
    }
    if (origins.has(name)) g.classList.add("movable");
  }
  renderSide();
}

function sideName(colour) {
  return colour === "white" ? "White" : "Black";
}

function renderSide() {
  const game = S.game;
  const status = $("status");
  const mustCapture = game.capture_forced ? " – a capture is compulsory (highlighted)" : "";
  if (game.result) {
    status.textContent = "Game over";
  } else if (S.thinking || game.thinking || game.computer_to_move) {
    status.textContent = "The computer is thinking…";
  } else if (game.opponent === "friend") {
    status.textContent = `${sideName(game.turn)} to move${mustCapture}`;
  } else if (game.turn === game.human) {
    status.textContent = `Your move (${sideName(game.turn)})${mustCapture}`;
  } else {
    status.textContent = `${sideName(game.turn)} (computer) to move`;
  }
  const result = $("result");
  if (game.result) {
    result.hidden = false;
    result.textContent = `${game.result.result} – ${game.result.message}`;
  } else {
    result.hidden = true;
    result.textContent = "";
  }
  if (game.engine_error) showError(game.engine_error);

  // the move list, numbered as PDN numbers it
  const first = game.variant.white_starts ? "White" : "Black";
  $("first-head").textContent = first;
  $("second-head").textContent = first === "White" ? "Black" : "White";
  const body = $("moves").querySelector("tbody");
  body.textContent = "";
  const lastIndex = game.moves.length - 1 + (game.move_rows.length && game.move_rows[0].first === "..." ? 1 : 0);
  game.move_rows.forEach((row, i) => {
    const tr = document.createElement("tr");
    const cells = [[`${row.number}.`, "num"], [row.first, ""], [row.second || "", ""]];
    cells.forEach(([text, cls], j) => {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      if (j > 0 && 2 * i + (j - 1) === lastIndex) td.classList.add("last");
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });
  const wrap = body.closest(".moves-wrap");
  wrap.scrollTop = wrap.scrollHeight;

  $("takeback").disabled = !game.can_take_back || S.busy;
  const save = $("save");
  save.href = `/api/games/${game.id}/pdn`;
  $("rules-link").href = `/rules/${game.variant.forced_capture ? game.variant.name : "no-forced-capture"}.html`;
  syncMenu();
}

function syncMenu() {
  const game = S.game;
  $("variant").value = game.variant.name;
  const v = S.variants.find((x) => x.name === game.variant.name);
  $("house").checked = !game.variant.forced_capture;
  $("house").disabled = !(v && v.house_rule);
  $("house-label").classList.toggle("disabled", !(v && v.house_rule));
  $("opponent").value = game.opponent === "friend" ? "friend" : game.level;
  $("side").value = game.human || (game.variant.white_starts ? "white" : "black");
  $("side").disabled = game.opponent === "friend";
  $("numbers").checked = S.numbers;
}

function showError(message) {
  const box = $("error");
  box.hidden = !message;
  box.textContent = message || "";
}

// -- dragging ------------------------------------------------------------------------------------

function squareAt(clientX, clientY) {
  const node = document.elementFromPoint(clientX, clientY);
  const g = node && node.closest ? node.closest("[data-square]") : null;
  return g ? g.getAttribute("data-square") : null;
}

function svgPoint(svg, e) {
  const p = svg.createSVGPoint();
  p.x = e.clientX; p.y = e.clientY;
  return p.matrixTransform(svg.getScreenCTM().inverse());
}

function onPointerDown(e) {
  if (e.button !== undefined && e.button !== 0) return;
  const name = squareAt(e.clientX, e.clientY);
  if (!name) return;
  handleSquare(name);
  if (S.selected === name && S.steps.length === 0 && S.game.pieces[name]) {
    S.drag = { origin: name, x: e.clientX, y: e.clientY, ghost: null, id: e.pointerId };
    try { $("board").setPointerCapture(e.pointerId); } catch (err) { /* synthetic events */ }
  }
  e.preventDefault();
}

function onPointerMove(e) {
  const d = S.drag;
  if (!d) return;
  const svg = $("board");
  if (!d.ghost && Math.hypot(e.clientX - d.x, e.clientY - d.y) < 6) return;
  const p = svgPoint(svg, e);
  if (!d.ghost) {
    d.ghost = drawPiece(svg, S.game.pieces[d.origin], 0, 0, "ghost");
    const g = svg.querySelector(`[data-square="${CSS.escape(d.origin)}"] .piece`);
    if (g) g.style.opacity = "0.3";
  }
  d.ghost.setAttribute("transform", `translate(${p.x} ${p.y})`);
}

function onPointerUp(e) {
  const d = S.drag;
  S.drag = null;
  if (!d) return;
  if (d.ghost) {
    d.ghost.remove();
    const target = squareAt(e.clientX, e.clientY);
    if (target && target !== d.origin) handleSquare(target);
    else render();
  }
}

// -- start ---------------------------------------------------------------------------------------

function fillVariants() {
  const select = $("variant");
  select.textContent = "";
  for (const v of S.variants) {
    const option = document.createElement("option");
    option.value = v.name;
    option.textContent = v.label;
    select.appendChild(option);
  }
}

function wire() {
  const svg = $("board");
  svg.addEventListener("pointerdown", onPointerDown);
  svg.addEventListener("pointermove", onPointerMove);
  svg.addEventListener("pointerup", onPointerUp);
  svg.addEventListener("pointercancel", () => { S.drag = null; render(); });

  $("mode").addEventListener("submit", (e) => { e.preventDefault(); newGame(menuRequest()); });
  $("variant").addEventListener("change", () => {
    const v = S.variants.find((x) => x.name === $("variant").value);
    $("side").value = v.first;   // the human begins, as on the rule pages
    if (!v.house_rule) $("house").checked = false;
    newGame(menuRequest());
  });
  for (const id of ["house", "opponent", "side"]) {
    $(id).addEventListener("change", () => newGame(menuRequest()));
  }
  $("takeback").addEventListener("click", takeBack);
  $("flip").addEventListener("click", () => { S.flip = !S.flip; render(); });
  $("numbers").addEventListener("change", () => { S.numbers = $("numbers").checked; savePrefs(); render(); });
  $("fen-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const request = menuRequest();
    request.fen = $("fen").value.trim();
    const m = /^\s*([WB])/i.exec(request.fen);
    if (m && request.opponent === "computer") request.human = m[1].toUpperCase() === "W" ? "white" : "black";
    newGame(request);
  });
}

async function start() {
  loadPrefs();
  wire();
  try {
    const known = await api("GET", "/api/variants");
    S.variants = known.variants;
    S.defaults = known.defaults;
  } catch (e) {
    $("status").textContent = e.message;
    return;
  }
  fillVariants();
  const saved = recalled();
  if (saved && saved.id) {
    try {
      apply(await api("GET", `/api/games/${encodeURIComponent(saved.id)}`), { force: true });
    } catch (e) {
      // the server restarted: replay the game from what this browser kept
      const request = Object.assign({}, saved.settings || {}, { fen: saved.start_fen, moves: saved.moves || [] });
      if (!(await newGame(request))) await newGame({});
    }
  } else {
    await newGame({});  // a first visit: the server's defaults (the American rules, you begin)
  }
  if (S.game && S.game.computer_to_move) engineMove(S.game.id);
}

start();
