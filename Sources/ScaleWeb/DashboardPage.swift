import ScaleProtocol

/// The page `/` serves: the scale in a browser. One self-contained document, its
/// CSS and script inline, so that it works offline and from a machine with no route to any
/// CDN; it needs nothing but this server's `/events`, `/api/status` and `/api/sessions…`
/// (and `/api/tare` when the server allows control).
///
/// One card per device the daemon serves, made when the device's first READING comes or
/// when STATUS's `devices` names it (protocol 1.5), in the order of their names. What each
/// shows, and the rules it shares with the CLI's gauge (ScaleDisplay.Gauge):
/// - the weight exactly as the stream carries it: READING's `grams` (already rounded to
///   0.1 g by the daemon) converted with MassUnit's factors and written with MassUnit's
///   decimals, rounded half away from zero like `fixed(_:decimals:)`; in grams that is the
///   stream's number itself, never re-rounded or smoothed;
/// - force in percent rounded down (so 100% never shows before saturation) and `100%+` when
///   the reading is saturated;
/// - a dial whose disc grows with force (area proportional to force, as the original
///   iPhone scale's circle grew), `role=meter` with `aria-valuenow` = that percentage;
/// - a title naming the device as it names itself (STATUS's `name`), with the protocol's
///   name for it (`event5`, `pen.evemu`) in small type beneath;
/// - PEAK when the daemon sends one, stability in words and a shape (never colour alone),
///   the device and gram model, and a plot of the last 30 s of grams with its axes: grams
///   with ticks at 1, 2 or 5 times a power of ten, seconds ago at every 10 s;
/// - "reconnecting" whenever the stream or the daemon behind it is gone; EventSource
///   reconnects by itself (the server's `retry:`), and a stream the browser gave up on is
///   opened again with a back-off.
///
/// Below the cards, the History of the force log (`/api/sessions`): a table of sessions,
/// newest first, a page at a time; a session opens to its plot, stable weights, PEAKs and
/// downloads; without a log, the server's words on how to switch logging on.
///
/// The page's element ids and each card's class names (a card is `.scale` with
/// `data-device`) are part of the interface: the browser tests (Tests/Browser) find them.
enum DashboardPage {
    static let html: String = #"""
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>forcescale</title>
<link rel="icon" href="data:,">
<style>
:root {
  --bg: #f6f6f4; --fg: #1b1b1b; --muted: #5d5d5d; --ring: #c9c9c4; --disc: #2f6fb3;
  --disc-stable: #2e7d4f; --disc-saturated: #b3261e; --card: #ffffff; --warn-bg: #fff3cd; --warn-fg: #5c4400;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #151515; --fg: #f0f0f0; --muted: #b0b0b0; --ring: #4a4a4a; --disc: #5a9be0;
    --disc-stable: #5cc58a; --disc-saturated: #ff6b5e; --card: #202020; --warn-bg: #4a3b00; --warn-fg: #ffe8a3;
  }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background: var(--bg); color: var(--fg); }
header { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; padding: .75rem 1rem; }
h1 { font-size: 1.1rem; margin: 0; letter-spacing: .02em; }
#connection { display: inline-flex; align-items: center; gap: .4rem; font-weight: 600; }
#connection .shape { width: .8rem; height: .8rem; display: inline-block; }
#connection[data-state="live"] .shape { border-radius: 50%; background: var(--disc-stable); }
#connection[data-state="connecting"] .shape,
#connection[data-state="reconnecting"] .shape { border: 2px dashed var(--disc-saturated); border-radius: 50%; }
#reconnecting { margin: 0 1rem; padding: .6rem .9rem; border-radius: .5rem; background: var(--warn-bg); color: var(--warn-fg); font-weight: 600; }
#reconnecting[hidden] { display: none; }
main { max-width: 76rem; margin: 0 auto; padding: 0 1rem 2rem; display: grid; gap: 1rem; }
#scales { display: grid; gap: 1rem; justify-content: center; grid-template-columns: repeat(auto-fit, minmax(min(100%, 22rem), 30rem)); }
#scales:empty::before { content: "No device yet."; color: var(--muted); }
.card { background: var(--card); border-radius: .9rem; padding: 1rem; }
.scale { display: grid; justify-items: center; gap: .5rem; align-content: start; }
.scale h2 { font-size: 1rem; margin: 0; justify-self: stretch; overflow-wrap: anywhere; }
.scale .node { font-size: .8rem; color: var(--muted); margin: -.45rem 0 0; justify-self: stretch; overflow-wrap: anywhere; }
.dial { width: min(70vw, 18rem); aspect-ratio: 1; position: relative; }
.dial svg { width: 100%; height: 100%; display: block; }
.dial .ring { fill: none; stroke: var(--ring); stroke-width: 2; }
.dial .full { fill: none; stroke: var(--ring); stroke-width: 1; stroke-dasharray: 4 4; }
.disc { fill: var(--disc); }
.dial[data-stable="true"] .disc { fill: var(--disc-stable); }
.dial[data-saturated="true"] .disc { fill: var(--disc-saturated); }
.peak-ring { fill: none; stroke: var(--fg); stroke-width: 3; stroke-dasharray: 10 6; }
main[data-stale="true"] .scale { opacity: .45; }
@media (prefers-reduced-motion: no-preference) {
  .disc { transition: r 90ms linear, fill 200ms; }
}
.readout { text-align: center; }
.weight { font-size: clamp(2.2rem, 10vw, 3.6rem); font-weight: 700; font-variant-numeric: tabular-nums; line-height: 1.1; margin: 0; }
.weight-unit { font-size: .5em; font-weight: 600; margin-left: .2em; }
.details { display: flex; flex-wrap: wrap; justify-content: center; gap: .4rem 1.2rem; align-items: center; font-size: 1.05rem; }
.percent { font-variant-numeric: tabular-nums; font-weight: 600; }
.stable { display: inline-flex; align-items: center; gap: .35rem; font-weight: 600; }
.stable svg { width: 1.1rem; height: 1.1rem; }
.stable .icon { display: none; }
.stable[data-state="stable"] .icon-stable, .stable[data-state="settling"] .icon-settling,
.stable[data-state="lifted"] .icon-lifted { display: inline; }
.peak { font-weight: 700; }
.peak[hidden] { display: none; }
.peak .badge { border: 2px solid currentColor; border-radius: .3rem; padding: 0 .3rem; margin-right: .35rem; }
.source { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: 0; justify-self: stretch; }
.source dt { color: var(--muted); }
.source dd { margin: 0; overflow-wrap: anywhere; }
.tare-row, #controls { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: center; }
.tare[hidden] { display: none; }
select, button { font: inherit; padding: .35rem .6rem; border-radius: .4rem; }
.trend { justify-self: stretch; margin: 0; }
.trend figcaption { font-weight: 600; margin-bottom: .2rem; }
.plot { width: 100%; height: auto; display: block; }
.plot .line { fill: none; stroke: var(--disc); stroke-width: 2; }
.plot .axis { stroke: var(--muted); stroke-width: 1; }
.plot .grid { stroke: var(--ring); stroke-width: 1; stroke-dasharray: 2 3; }
.plot text { fill: var(--muted); font-size: 11px; font-variant-numeric: tabular-nums; }
#history { min-width: 0; }
#history h2, #session-detail h3 { font-size: 1.05rem; margin: 0 0 .5rem; }
.history-bar, .paging, .downloads { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; margin: .5rem 0; }
.table-wrap { overflow-x: auto; }
#sessions { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
#sessions caption { text-align: left; color: var(--muted); padding-bottom: .3rem; }
#sessions th, #sessions td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--ring); vertical-align: top; }
#sessions td.number, #sessions th.number { text-align: right; }
#sessions td.number, .open-session { white-space: nowrap; }
#sessions tr[aria-current="true"] { outline: 2px solid var(--fg); outline-offset: -2px; }
#sessions[hidden], #session-detail[hidden], .paging button[hidden] { display: none; }
#session-detail { margin-top: 1rem; }
#session-detail h3:focus { outline: 2px solid var(--fg); outline-offset: 2px; }
#session-plot { width: 100%; max-width: 800px; height: auto; display: block; background: #fff; border-radius: .4rem; }
.session-lists { display: flex; flex-wrap: wrap; gap: .5rem 2rem; }
.session-lists ul { margin: .2rem 0; padding-left: 1.2rem; }
a { color: inherit; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
</style>
</head>
<body>
<header>
  <h1>forcescale</h1>
  <span id="connection" data-state="connecting"><span class="shape" aria-hidden="true"></span><span id="connection-text">connecting…</span></span>
</header>
<p id="reconnecting" role="status" hidden>Reconnecting: <span id="reconnecting-reason">the stream is gone</span>. The page recovers by itself.</p>
<main id="content" data-stale="true">
  <section id="controls" class="card" aria-label="Controls">
    <label>Unit
      <select id="unit">
        <option value="g">g (grams)</option>
        <option value="kg">kg (kilograms)</option>
        <option value="oz">oz (ounces)</option>
        <option value="lb">lb (pounds)</option>
        <option value="ct">ct (carats)</option>
        <option value="N">N (newtons)</option>
      </select>
    </label>
    <button id="weigh-added" type="button" hidden>Weigh what I add</button>
    <span id="weigh-added-step" role="status"></span>
  </section>
  <div id="scales"></div>
  <section id="history" class="card" aria-labelledby="history-title">
    <h2 id="history-title">History</h2>
    <div class="history-bar">
      <button id="history-refresh" type="button">Refresh</button>
      <span id="history-status" role="status">Loading the force log…</span>
    </div>
    <div class="table-wrap">
      <table id="sessions" hidden>
        <caption id="sessions-caption">Sessions of the force log, newest first</caption>
        <thead><tr><th scope="col">Session</th><th scope="col">Device</th><th scope="col">Started</th><th scope="col" class="number">Length</th>
          <th scope="col" class="number">Readings</th><th scope="col" class="number">Peak</th><th scope="col" class="number">Weight taken</th><th scope="col" class="number">PEAKs</th></tr></thead>
        <tbody id="sessions-body"></tbody>
      </table>
    </div>
    <div class="paging">
      <button id="history-newest" type="button" hidden>Newest sessions</button>
      <button id="history-older" type="button" hidden>Older sessions</button>
    </div>
    <section id="session-detail" aria-labelledby="session-title" hidden>
      <h3 id="session-title" tabindex="-1"></h3>
      <p id="session-summary"></p>
      <img id="session-plot" alt="" width="800" height="450">
      <div class="session-lists">
        <div><h4>Stable weights</h4><ul id="session-weights"></ul></div>
        <div><h4>PEAKs</h4><ul id="session-peaks"></ul></div>
      </div>
      <p class="downloads">Download:
        <a id="download-csv" download>readings as CSV</a>
        <a id="download-json" download>readings as JSON lines</a>
        <a id="download-svg" download>the plot (SVG)</a>
      </p>
    </section>
  </section>
</main>
<template id="scale-template">
  <section class="card scale">
    <h2 class="title"></h2>
    <p class="node"></p>
    <div class="dial" role="meter" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0" aria-valuetext="no reading yet" data-stable="false" data-saturated="false">
      <svg viewBox="0 0 200 200" aria-hidden="true" focusable="false">
        <circle class="ring" cx="100" cy="100" r="96"></circle>
        <circle class="full" cx="100" cy="100" r="90"></circle>
        <circle class="disc" cx="100" cy="100" r="0"></circle>
        <circle class="peak-ring" cx="100" cy="100" r="90" visibility="hidden"></circle>
      </svg>
    </div>
    <div class="readout">
      <p class="weight"><span class="weight-value">–</span><span class="weight-unit">g</span></p>
      <div class="details">
        <span><span class="percent">0%</span> <span class="visually-hidden">of full force</span></span>
        <span class="stable" data-state="lifted">
          <svg class="icon icon-stable" viewBox="0 0 20 20" aria-hidden="true"><rect x="2" y="2" width="16" height="16" fill="currentColor"></rect></svg>
          <svg class="icon icon-settling" viewBox="0 0 20 20" aria-hidden="true"><path d="M2 10 Q6 2 10 10 T18 10" fill="none" stroke="currentColor" stroke-width="3"></path></svg>
          <svg class="icon icon-lifted" viewBox="0 0 20 20" aria-hidden="true"><circle cx="10" cy="10" r="7" fill="none" stroke="currentColor" stroke-width="2"></circle></svg>
          <span class="stable-text">nothing on the pad</span>
        </span>
        <span class="peak" hidden><span class="badge">PEAK</span><span class="peak-value"></span></span>
      </div>
    </div>
    <div class="tare-row">
      <button class="tare" type="button" hidden>Tare</button>
      <span class="tare-result" role="status"></span>
    </div>
    <figure class="trend">
      <figcaption>Last 30 seconds</figcaption>
      <svg class="plot" viewBox="0 0 320 140" role="img">
        <g class="grid-lines"></g>
        <line class="axis" x1="44" y1="18" x2="44" y2="110"></line>
        <line class="axis" x1="44" y1="110" x2="312" y2="110"></line>
        <g class="ticks"></g>
        <text class="y-unit" x="44" y="9" text-anchor="middle">g</text>
        <text class="x-unit" x="312" y="138" text-anchor="end">s ago</text>
        <polyline class="line" points=""></polyline>
      </svg>
    </figure>
    <dl class="source">
      <dt>Device</dt><dd class="device">–</dd>
      <dt>Name</dt><dd class="name">–</dd>
      <dt>Gram model</dt><dd class="model">–</dd>
    </dl>
  </section>
</template>
<div id="announce" class="visually-hidden" aria-live="polite" aria-atomic="true"></div>
<script>
"use strict";
(function () {
  // MassUnit (ScaleCore): grams per unit and the decimals the CLI shows.
  var UNITS = {
    g: { grams: 1, decimals: 1 },
    kg: { grams: 1000, decimals: 4 },
    oz: { grams: 28.349523125, decimals: 3 },
    lb: { grams: 453.59237, decimals: 4 },
    ct: { grams: 0.2, decimals: 1 },
    N: { grams: 1000 / 9.80665, decimals: 4 }
  };
  var WINDOW_MS = 30000;
  // The plot's area in its viewBox: x from LEFT (30 s ago) to RIGHT (now), y from TOP
  // (the highest tick) to BOTTOM (0 g).
  var PLOT = { left: 44, right: 312, top: 18, bottom: 110 };
  var SVG = "http://www.w3.org/2000/svg";
  var $ = function (id) { return document.getElementById(id); };

  // ScaleDisplay's fixed(_:decimals:): exactly `decimals` decimals, half away from zero.
  function fixed(value, decimals) {
    var scale = Math.pow(10, decimals);
    if (!isFinite(value) || Math.abs(value * scale) >= 9e15) return String(value);
    var scaled = Math.round(Math.abs(value) * scale);
    var sign = value < 0 && scaled !== 0 ? "-" : "";
    if (decimals === 0) return sign + scaled;
    var whole = Math.floor(scaled / scale), fraction = String(scaled - whole * scale);
    while (fraction.length < decimals) fraction = "0" + fraction;
    return sign + whole + "." + fraction;
  }
  function unitName() { return $("unit").value in UNITS ? $("unit").value : "g"; }
  function weightText(grams) {
    var unit = UNITS[unitName()];
    return fixed(grams / unit.grams, unit.decimals);
  }
  // The Gauge's rule: rounded down, "100%+" once saturated.
  function percentOf(reading) {
    var percent = Math.floor(Math.max(0, Math.min(1, reading.force)) * 100);
    return { now: reading.saturated ? 100 : percent, text: reading.saturated ? "100%+" : percent + "%" };
  }
  function stateOf(reading) {
    if (reading.contacts === 0) return { key: "lifted", words: "nothing on the pad" };
    // ReadingMessage.beyondCalibrationText's words: the grams are an extrapolation.
    var beyond = "";
    if (typeof reading.beyond_calibration === "number") {
      var tenths = Math.round(reading.beyond_calibration * 10);
      beyond = ", beyond the heaviest calibration weight, " + (tenths % 10 === 0 ? String(tenths / 10) : (tenths / 10).toFixed(1)) + " g";
    }
    if (reading.stable) return { key: "stable", words: "stable" + beyond };
    return { key: "settling", words: "settling" + beyond };
  }
  // Ticks at 1, 2 or 5 times a power of ten, about four of them up to `top` grams.
  function tickStep(top) {
    var rough = top / 4, power = Math.pow(10, Math.floor(Math.log10(rough)));
    return [1, 2, 5, 10].map(function (m) { return m * power; }).find(function (s) { return s >= rough; });
  }

  // The devices, by their name in READING's `device` ("" for a daemon that names none).
  var scales = {}, status = null, control = false, statusDevices = [];
  var renderQueued = false;
  var streamOpen = false, daemonUp = null;

  function scaleFor(device) {
    if (scales[device]) return scales[device];
    var card = $("scale-template").content.firstElementChild.cloneNode(true);
    var scale = { device: device, card: card, latest: null, peak: null, peakDuringPress: false, history: [], top: 0,
                  name: null, model: null, announced: "" };
    var part = function (name) { return card.querySelector("." + name); };
    scale.part = part;
    card.setAttribute("data-device", device);
    part("device").textContent = device || "–";
    nameCard(scale);
    part("tare").hidden = !control;
    part("tare").addEventListener("click", function () { tare(scale); });
    scales[device] = scale;
    var after = Object.keys(scales).sort().filter(function (name) { return name > device; })[0];
    $("scales").insertBefore(card, after === undefined ? null : scales[after].card);
    drawAxes(scale, 385);
    render(scale);
    return scale;
  }
  // A card is titled with the device's own name (STATUS's `name`: "Wacom Intuos4 6x9 Pen")
  // once the daemon gives it, with the protocol's name for it ("event5", "pen.evemu") in
  // small type beneath; until then, and for a daemon that names none, with the latter.
  function displayName(scale) { return scale.name || scale.device || "the scale"; }
  function nameCard(scale) {
    var part = scale.part, label = scale.name && scale.device ? scale.name + " (" + scale.device + ")" : displayName(scale);
    part("title").textContent = scale.name || scale.device || "Scale";
    part("node").textContent = scale.name ? scale.device : "";
    part("node").hidden = !scale.name || !scale.device;
    part("dial").setAttribute("aria-label", "Force on " + label);
    part("plot").setAttribute("aria-label", "Weight on " + label + " over the last 30 seconds, in grams");
  }
  function eachScale(body) { Object.keys(scales).forEach(function (name) { body(scales[name]); }); }

  try {
    var saved = window.localStorage.getItem("forcescale-unit");
    if (saved && saved in UNITS) $("unit").value = saved;
  } catch (e) { /* storage may be off; grams it is */ }
  $("unit").addEventListener("change", function () {
    try { window.localStorage.setItem("forcescale-unit", unitName()); } catch (e) { }
    eachScale(function (scale) { scale.announced = ""; render(scale); });
    // The history's weights too, in the new unit.
    if (historySessions.length) drawHistory();
    if (openSession) showSession(openSession.session, false);
  });

  function setConnection() {
    var live = isLive();
    var anyReading = Object.keys(scales).some(function (name) { return scales[name].latest; });
    var state = live ? "live" : (streamOpen || daemonUp !== null || anyReading ? "reconnecting" : "connecting");
    var text = live ? "live" : state === "connecting" ? "connecting…" : "reconnecting…";
    $("connection").setAttribute("data-state", state);
    $("connection-text").textContent = text;
    $("reconnecting").hidden = live || state === "connecting";
    $("reconnecting-reason").textContent = !streamOpen ? "the connection to this server is gone"
      : "forcescaled is not answering";
    $("content").setAttribute("data-stale", live && anyReading ? "false" : "true");
    queueRender();
  }
  function isLive() { return streamOpen && daemonUp === true; }

  function render(scale) {
    var part = scale.part, reading = scale.latest;
    part("weight-unit").textContent = unitName();
    if (scale.peak) part("peak-value").textContent = weightText(scale.peak.grams) + " " + unitName();
    if (scale.name) part("name").textContent = scale.name;
    if (scale.model) part("model").textContent = scale.model;
    if (!reading) return;
    var percent = percentOf(reading), state = stateOf(reading);
    // A stable reading shows its settled weight (the stable window's mean, protocol 1.3).
    var grams = typeof reading.settled_grams === "number" ? reading.settled_grams : reading.grams;
    var weight = weightText(grams);
    part("weight-value").textContent = weight;
    part("weight-value").setAttribute("data-grams", String(grams));
    part("percent").textContent = percent.text;
    var dial = part("dial");
    dial.setAttribute("aria-valuenow", String(percent.now));
    dial.setAttribute("aria-valuetext", weight + " " + unitName() + ", " + percent.text + " force, " + state.words);
    dial.setAttribute("data-stable", reading.stable ? "true" : "false");
    dial.setAttribute("data-saturated", reading.saturated ? "true" : "false");
    // Area grows with force, as the original's circle did.
    var force = Math.max(0, Math.min(1, reading.force));
    part("disc").setAttribute("r", (90 * Math.sqrt(force)).toFixed(2));
    part("peak-ring").setAttribute("visibility", scale.peakDuringPress ? "visible" : "hidden");
    part("stable").setAttribute("data-state", state.key);
    part("stable-text").textContent = state.words;
    if (reading.model) part("model").textContent = reading.model;
    drawPlot(scale);
    if (!isLive()) {
      // The last weight stays in view, dimmed, but nothing claims it is stable now, and
      // nothing is announced until readings flow again.
      part("stable").setAttribute("data-state", "lifted");
      part("stable-text").textContent = "no live reading";
      dial.setAttribute("aria-valuetext", weight + " " + unitName() + ", the last reading, not live");
      scale.announced = "";
      return;
    }
    // Only stable weights are announced, once each; a lift lets the same weight be
    // announced again when it is put back. With several devices, the words name the device.
    if (reading.contacts === 0) scale.announced = "";
    else if (reading.stable) {
      var several = Object.keys(scales).length > 1;
      var words = (several ? displayName(scale) + ": stable: " : "Stable: ") + weight + " " + unitName();
      if (words !== scale.announced) { scale.announced = words; $("announce").textContent = words; }
    }
  }
  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    var all = function () { renderQueued = false; eachScale(render); };
    // A hidden tab gets no animation frames; render there at once so it is current when shown.
    if (document.hidden) all(); else window.requestAnimationFrame(all);
  }

  function element(name, attributes, text) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (key) { node.setAttribute(key, attributes[key]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  // The axes' ticks and labels for a plot whose highest tick is at least `top` grams:
  // drawn again only when that changes.
  function drawAxes(scale, top) {
    var step = tickStep(top), highest = Math.ceil(top / step) * step;
    if (highest === scale.top) return;
    scale.top = highest;
    var ticks = scale.part("ticks"), grid = scale.part("grid-lines");
    ticks.textContent = "";
    grid.textContent = "";
    for (var grams = 0; grams <= highest + step / 2; grams += step) {
      var y = PLOT.bottom - grams / highest * (PLOT.bottom - PLOT.top);
      ticks.appendChild(element("line", { class: "axis", x1: PLOT.left - 4, y1: y, x2: PLOT.left, y2: y }));
      ticks.appendChild(element("text", { class: "y-tick", x: PLOT.left - 6, y: y + 4, "text-anchor": "end" }, String(Math.round(grams * 1000) / 1000)));
      if (grams > 0) grid.appendChild(element("line", { class: "grid", x1: PLOT.left, y1: y, x2: PLOT.right, y2: y }));
    }
    for (var ago = 30; ago >= 0; ago -= 10) {
      var x = PLOT.right - ago * 1000 / WINDOW_MS * (PLOT.right - PLOT.left);
      ticks.appendChild(element("line", { class: "axis", x1: x, y1: PLOT.bottom, x2: x, y2: PLOT.bottom + 4 }));
      ticks.appendChild(element("text", { class: "x-tick", x: x, y: PLOT.bottom + 14, "text-anchor": ago === 0 ? "end" : "middle" }, ago === 0 ? "0" : "−" + ago));
    }
  }
  function drawPlot(scale) {
    var now = performance.now(), history = scale.history;
    while (history.length && now - history[0].at > WINDOW_MS) history.shift();
    var top = 385;
    history.forEach(function (point) { if (point.grams > top) top = point.grams; });
    drawAxes(scale, top);
    var width = PLOT.right - PLOT.left, height = PLOT.bottom - PLOT.top;
    var points = [], previous = null;
    history.forEach(function (point) {
      var x = (PLOT.right - (now - point.at) / WINDOW_MS * width).toFixed(1);
      // Readings stop while nothing changes (a lifted pad): hold the last value until the
      // next one, a step rather than a slope that no reading carried.
      if (previous && point.at - previous.at > 150) points.push(x + "," + previous.y);
      var y = (PLOT.bottom - Math.max(0, point.grams) / scale.top * height).toFixed(1);
      points.push(x + "," + y);
      previous = { at: point.at, y: y };
    });
    scale.part("line").setAttribute("points", points.join(" "));
  }

  function onReading(event) {
    var reading;
    try { reading = JSON.parse(event.data); } catch (e) { return; }
    if (typeof reading.grams !== "number") return;
    var scale = scaleFor(typeof reading.device === "string" ? reading.device : "");
    if (scale.latest && scale.latest.contacts === 0 && reading.contacts > 0) scale.peakDuringPress = false;
    scale.latest = reading;
    addedFeed(reading);
    scale.history.push({ at: performance.now(), grams: reading.grams });
    if (daemonUp !== true) { daemonUp = true; setConnection(); }
    if ($("content").getAttribute("data-stale") === "true") setConnection();
    queueRender();
  }
  function onPeak(event) {
    var message;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    if (typeof message.grams !== "number") return;
    var scale = scaleFor(typeof message.device === "string" ? message.device : "");
    scale.peak = message;
    scale.peakDuringPress = true;
    scale.part("peak").hidden = false;
    queueRender();
  }
  function onDaemon(event) {
    var message;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    daemonUp = message.up === true;
    setConnection();
    if (daemonUp) refreshStatus();
  }

  function refreshStatus() {
    fetch("api/status", { cache: "no-store" }).then(function (response) {
      return response.ok ? response.json() : null;
    }).then(function (body) {
      if (!body) return;
      status = body.status || null;
      control = body.control === true;
      // STATUS's `devices` (protocol 1.5) names every device served, each with its own
      // name and model; an older daemon names its one device at the top level.
      statusDevices = status && Array.isArray(status.devices) ? status.devices
        : status && status.device ? [{ device: status.device, model: status.model, calibration: status.calibration }] : [];
      statusDevices.forEach(function (entry) {
        if (typeof entry.device !== "string") return;
        var scale = scales[entry.device] || (scales[""] && statusDevices.length === 1 ? scales[""] : scaleFor(entry.device));
        if (typeof entry.name === "string" && entry.name && entry.name !== scale.name) { scale.name = entry.name; nameCard(scale); }
        if (typeof entry.model === "string" && !(scale.latest && scale.latest.model)) scale.model = entry.model;
      });
      // Tare and the guided weighing are offered only where the server was started with
      // --allow-control.
      eachScale(function (scale) { scale.part("tare").hidden = !control; });
      $("weigh-added").hidden = !control;
      if (daemonUp === null) { daemonUp = body.up === true; setConnection(); }
      queueRender();
    }).catch(function () { /* the stream's state says what is wrong */ });
  }
  function calibrationOf(device) {
    var entry = statusDevices.find(function (entry) { return entry.device === device; }) || statusDevices[0];
    return entry && entry.model === "calibrated" && entry.calibration && typeof entry.calibration.uncertainty === "number"
      ? entry.calibration.uncertainty : 0;
  }

  // "Weigh what I add": forcescale weigh --tare-first on the page (ScaleCore's AddedWeight,
  // the same rule): the steady contact is the zero, the daemon's tare untouched; what is
  // added within the same touch is weighed once a whole window of readings is stable again.
  // It weighs on the device where the first contact rests, and on that one only.
  var WINDOW_S = 0.5, added = null;
  function addedStart() {
    added = { step: "contact", device: null, samples: [], stableSince: null, moved: false, zero: null, zeroTime: 0 };
    $("weigh-added").textContent = "Start again";
    addedShow("Put a contact on the pad (a finger, a coin, a metal lid) and keep it still…");
  }
  function addedShow(text) { $("weigh-added-step").textContent = text; }
  function addedWindow() {
    var n = added.samples.length, mean = 0, squares = 0;
    added.samples.forEach(function (s) { mean += s.grams / n; });
    added.samples.forEach(function (s) { squares += (s.grams - mean) * (s.grams - mean); });
    var sd = n > 1 ? Math.sqrt(squares / (n - 1)) : 0;
    return { mean: mean, error: Math.max(sd, 0.05) / Math.sqrt(Math.max(n, 1)) };
  }
  function addedFeed(reading) {
    if (!added || added.step === "done") return;
    var device = typeof reading.device === "string" ? reading.device : "";
    if (added.device === null) {
      if (reading.contacts === 0) return;
      added.device = device;
    }
    if (device !== added.device) return;
    if (reading.contacts === 0) {
      if (added.step === "object") {
        added.step = "done";
        addedShow("The contact was lifted before the object settled: nothing was weighed. Start again.");
      } else {
        added.samples = []; added.stableSince = null; added.device = null;
      }
      return;
    }
    var t = reading.time;
    if (!reading.stable) added.stableSince = null; else if (added.stableSince === null) added.stableSince = t;
    added.samples.push({ time: t, grams: reading.grams });
    while (added.samples.length && added.samples[0].time < t - WINDOW_S) added.samples.shift();
    var settled = added.stableSince !== null && t - added.stableSince >= WINDOW_S;
    var where = Object.keys(scales).length > 1 ? " on " + (scales[device] ? displayName(scales[device]) : device) : "";
    if (added.step === "contact") {
      if (!settled) return;
      added.zero = addedWindow(); added.zeroTime = t; added.step = "object";
      addedShow("Zero taken at " + weightText(added.zero.mean) + " " + unitName() + where + ". Now add the object beside the contact, without lifting it…");
      return;
    }
    if (!reading.stable) added.moved = true;
    if (!settled || t - WINDOW_S < added.zeroTime) return;
    var total = addedWindow(), zero = added.zero;
    var error = Math.sqrt(zero.error * zero.error + total.error * total.error);
    if (!added.moved || Math.abs(total.mean - zero.mean) <= 3 * error) return;
    var calibration = calibrationOf(device);
    var uncertainty = Math.sqrt(4 * error * error + calibration * calibration);
    added.step = "done";
    var result = weightText(total.mean - zero.mean) + " " + unitName() + " ± " + weightText(uncertainty) + " " + unitName() + " added" + where;
    $("weigh-added-step").setAttribute("data-grams", String(total.mean - zero.mean));
    addedShow(result);
  }
  $("weigh-added").addEventListener("click", addedStart);

  // History: the force log's sessions from api/sessions, a page at a time, newest first;
  // a session opens to its plot (the SVG `forcescale log plot` draws), its stable weights,
  // its PEAKs and its downloads. Without a log, the server's answer says how to switch
  // logging on, and the page shows it.
  var HISTORY_PAGE = 10, historyBefore = null, historyNext = null, historySessions = [], openSession = null;
  function localTime(seconds) { return new Date(seconds * 1000).toLocaleString(); }
  function lengthText(session) {
    return typeof session.duration === "number" ? fixed(session.duration, 1) + " s" : "still on (open)";
  }
  function gramsText(grams) { return typeof grams === "number" ? weightText(grams) + " " + unitName() : "none"; }
  function loadHistory(before) {
    $("history-status").textContent = "Loading the force log…";
    fetch("api/sessions?limit=" + HISTORY_PAGE + (before ? "&before=" + before : ""), { cache: "no-store" }).then(function (response) {
      return response.json().then(function (body) { return { ok: response.ok, body: body }; });
    }).then(function (answer) {
      if (!answer.ok) {
        historySessions = [];
        $("sessions").hidden = true;
        $("history-older").hidden = true;
        $("history-newest").hidden = true;
        $("history-status").textContent = (answer.body.log === "missing" ? "No force log to show. " : "The force log cannot be read. ") + (answer.body.error || "");
        $("history").setAttribute("data-log", answer.body.log === "missing" ? "missing" : "error");
        return;
      }
      $("history").setAttribute("data-log", "present");
      historyBefore = before || null;
      historyNext = typeof answer.body.next_before === "number" ? answer.body.next_before : null;
      historySessions = answer.body.sessions || [];
      drawHistory();
    }).catch(function () {
      $("history-status").textContent = "The force log could not be loaded: no connection to this server.";
    });
  }
  function drawHistory() {
    var body = $("sessions-body");
    body.textContent = "";
    historySessions.forEach(function (session) {
      var row = document.createElement("tr");
      row.setAttribute("data-session", String(session.session));
      if (openSession && openSession.session === session.session) row.setAttribute("aria-current", "true");
      var first = document.createElement("td");
      var button = document.createElement("button");
      button.type = "button";
      button.className = "open-session";
      button.textContent = "Session " + session.session;
      button.addEventListener("click", function () { showSession(session.session); });
      first.appendChild(button);
      row.appendChild(first);
      var peaks = Array.isArray(session.peaks) ? session.peaks.length : 0;
      [[session.device, ""], [localTime(session.started), ""], [lengthText(session), "number"],
       [String(session.readings), "number"], [gramsText(session.peak_grams), "number"],
       [gramsText(session.stable_grams), "number"], [String(peaks), "number"]].forEach(function (cell) {
        var td = document.createElement("td");
        td.textContent = cell[0];
        if (cell[1]) td.className = cell[1];
        row.appendChild(td);
      });
      body.appendChild(row);
    });
    $("sessions").hidden = historySessions.length === 0;
    $("history-older").hidden = historyNext === null;
    $("history-newest").hidden = historyBefore === null;
    $("history-status").textContent = historySessions.length === 0 ? "No sessions in the force log yet."
      : "Sessions " + historySessions[0].session + " to " + historySessions[historySessions.length - 1].session
        + (historyNext === null ? ", the oldest." : "; older ones on the next page.");
  }
  function showSession(id, focus) {
    fetch("api/sessions/" + id, { cache: "no-store" }).then(function (response) {
      return response.json().then(function (body) { return { ok: response.ok, body: body }; });
    }).then(function (answer) {
      if (!answer.ok) { $("history-status").textContent = answer.body.error || "The session could not be loaded."; return; }
      var session = answer.body.session;
      openSession = session;
      $("session-detail").hidden = false;
      $("session-detail").setAttribute("data-session", String(session.session));
      $("session-title").textContent = "Session " + session.session + " on " + session.device;
      $("session-summary").textContent = "Started " + localTime(session.started) + "; " + lengthText(session) + "; "
        + session.readings + " readings; heaviest " + gramsText(session.peak_grams) + ".";
      var base = "api/sessions/" + session.session;
      $("session-plot").alt = "Plot of session " + session.session + " on " + session.device
        + ": grams against seconds since it started, each PEAK marked; heaviest " + fixed(session.peak_grams, 1) + " g.";
      $("session-plot").src = base + ".svg";
      $("download-csv").href = base + ".csv";
      $("download-json").href = base + ".json";
      $("download-svg").href = base + ".svg";
      var weights = $("session-weights"), peaks = $("session-peaks");
      weights.textContent = "";
      peaks.textContent = "";
      (answer.body.stable_weights || []).forEach(function (weight) {
        var item = document.createElement("li");
        item.className = "stable-weight";
        item.textContent = gramsText(weight.grams) + ", stable for " + fixed(weight.to - weight.from, 1) + " s from " + localTime(weight.from);
        weights.appendChild(item);
      });
      (session.peaks || []).forEach(function (peak) {
        var item = document.createElement("li");
        item.className = "session-peak";
        item.textContent = gramsText(peak.grams) + " at " + fixed(peak.time - session.started, 2) + " s" + (peak.rumble ? ", rumble " + peak.rumble : "");
        peaks.appendChild(item);
      });
      if (!weights.firstChild) weights.appendChild(document.createElement("li")).textContent = "none: nothing rested still";
      if (!peaks.firstChild) peaks.appendChild(document.createElement("li")).textContent = "none";
      drawHistory();
      if (focus !== false) $("session-title").focus();
    }).catch(function () { $("history-status").textContent = "The session could not be loaded: no connection to this server."; });
  }
  $("history-refresh").addEventListener("click", function () { loadHistory(historyBefore); });
  $("history-older").addEventListener("click", function () { if (historyNext !== null) loadHistory(historyNext); });
  $("history-newest").addEventListener("click", function () { loadHistory(null); });

  function tare(scale) {
    var result = scale.part("tare-result");
    result.textContent = "taring…";
    var query = scale.device ? "?device=" + encodeURIComponent(scale.device) : "";
    fetch("api/tare" + query, { method: "POST" }).then(function (response) {
      result.textContent = response.ok ? "tared" : "tare refused (" + response.status + ")";
    }).catch(function () { result.textContent = "tare failed: no connection"; });
  }

  var source = null, retryMs = 1000;
  function connect() {
    source = new EventSource("events");
    source.onopen = function () { streamOpen = true; retryMs = 1000; setConnection(); refreshStatus(); };
    source.onerror = function () {
      streamOpen = false;
      setConnection();
      // EventSource retries by itself unless it gave up (a non-2xx answer, say): then
      // open a new one, waiting longer each time up to 10 s.
      if (source.readyState === EventSource.CLOSED) {
        source = null;
        window.setTimeout(connect, retryMs);
        retryMs = Math.min(10000, retryMs * 2);
      }
    };
    source.addEventListener("reading", onReading);
    source.addEventListener("peak", onPeak);
    source.addEventListener("daemon", onDaemon);
  }
  // The plots scroll even while no reading comes.
  window.setInterval(function () { eachScale(function (scale) { if (scale.latest) drawPlot(scale); }); }, 1000);
  setConnection();
  refreshStatus();
  connect();
  loadHistory(null);
})();
</script>
</body>
</html>
"""#
}
