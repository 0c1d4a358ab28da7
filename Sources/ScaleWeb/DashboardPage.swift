import ScaleProtocol

/// The page `/` serves: the scale in a browser. One self-contained document, its
/// CSS and script inline, so that it works offline and from a machine with no route to any
/// CDN; it needs nothing but this server's `/events` and `/api/status` (and `/api/tare`
/// when the server allows control).
///
/// What it shows, and the rules it shares with the CLI's gauge (ScaleDisplay.Gauge):
/// - the weight exactly as the stream carries it: READING's `grams` (already rounded to
///   0.1 g by the daemon) converted with MassUnit's factors and written with MassUnit's
///   decimals, rounded half away from zero like `fixed(_:decimals:)`; in grams that is the
///   stream's number itself, never re-rounded or smoothed;
/// - force in percent rounded down (so 100% never shows before saturation) and `100%+` when
///   the reading is saturated;
/// - a dial whose disc grows with force (area proportional to force, as the original
///   iPhone scale's circle grew), `role=meter` with `aria-valuenow` = that percentage;
/// - PEAK when the daemon sends one, stability in words and a shape (never colour alone),
///   the device and gram model, a 30 s sparkline of grams;
/// - "reconnecting" whenever the stream or the daemon behind it is gone; EventSource
///   reconnects by itself (the server's `retry:`), and a stream the browser gave up on is
///   opened again with a back-off.
///
/// Element ids are part of the interface: the browser test (Tests/Browser) finds them.
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
main { max-width: 44rem; margin: 0 auto; padding: 0 1rem 2rem; display: grid; gap: 1rem; }
.card { background: var(--card); border-radius: .9rem; padding: 1rem; }
#scale { display: grid; justify-items: center; gap: .5rem; }
#dial { width: min(78vw, 22rem); aspect-ratio: 1; position: relative; }
#dial svg { width: 100%; height: 100%; display: block; }
#dial .ring { fill: none; stroke: var(--ring); stroke-width: 2; }
#dial .full { fill: none; stroke: var(--ring); stroke-width: 1; stroke-dasharray: 4 4; }
#disc { fill: var(--disc); }
#dial[data-stable="true"] #disc { fill: var(--disc-stable); }
#dial[data-saturated="true"] #disc { fill: var(--disc-saturated); }
#peak-ring { fill: none; stroke: var(--fg); stroke-width: 3; stroke-dasharray: 10 6; }
main[data-stale="true"] #scale, main[data-stale="true"] #trend { opacity: .45; }
@media (prefers-reduced-motion: no-preference) {
  #disc { transition: r 90ms linear, fill 200ms; }
}
#readout { text-align: center; }
#weight { font-size: clamp(2.6rem, 13vw, 4.5rem); font-weight: 700; font-variant-numeric: tabular-nums; line-height: 1.1; margin: 0; }
#weight-unit { font-size: .5em; font-weight: 600; margin-left: .2em; }
#details { display: flex; flex-wrap: wrap; justify-content: center; gap: .4rem 1.2rem; align-items: center; font-size: 1.05rem; }
#percent { font-variant-numeric: tabular-nums; font-weight: 600; }
#stable { display: inline-flex; align-items: center; gap: .35rem; font-weight: 600; }
#stable svg { width: 1.1rem; height: 1.1rem; }
#stable .icon { display: none; }
#stable[data-state="stable"] .icon-stable, #stable[data-state="settling"] .icon-settling,
#stable[data-state="lifted"] .icon-lifted { display: inline; }
#peak { font-weight: 700; }
#peak[hidden] { display: none; }
#peak .badge { border: 2px solid currentColor; border-radius: .3rem; padding: 0 .3rem; margin-right: .35rem; }
#source { display: grid; grid-template-columns: max-content 1fr; gap: .2rem .8rem; margin: 0; }
#source dt { color: var(--muted); }
#source dd { margin: 0; overflow-wrap: anywhere; }
#controls { display: flex; flex-wrap: wrap; gap: .6rem 1rem; align-items: center; }
select, button { font: inherit; padding: .35rem .6rem; border-radius: .4rem; }
#trend h2, #source-card h2 { font-size: 1rem; margin: 0 0 .4rem; }
#sparkline { width: 100%; height: 5rem; display: block; }
#sparkline polyline { fill: none; stroke: var(--disc); stroke-width: 2; vector-effect: non-scaling-stroke; }
#sparkline .axis { stroke: var(--ring); stroke-width: 1; vector-effect: non-scaling-stroke; }
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
  <section id="scale" class="card" aria-label="Scale">
    <div id="dial" role="meter" aria-label="Force on the pad" aria-valuemin="0" aria-valuemax="100" aria-valuenow="0" aria-valuetext="no reading yet" data-stable="false" data-saturated="false">
      <svg viewBox="0 0 200 200" aria-hidden="true" focusable="false">
        <circle class="ring" cx="100" cy="100" r="96"></circle>
        <circle class="full" cx="100" cy="100" r="90"></circle>
        <circle id="disc" cx="100" cy="100" r="0"></circle>
        <circle id="peak-ring" cx="100" cy="100" r="90" visibility="hidden"></circle>
      </svg>
    </div>
    <div id="readout">
      <p id="weight"><span id="weight-value">–</span><span id="weight-unit">g</span></p>
      <div id="details">
        <span><span id="percent">0%</span> <span class="visually-hidden">of full force</span></span>
        <span id="stable" data-state="lifted">
          <svg class="icon icon-stable" viewBox="0 0 20 20" aria-hidden="true"><rect x="2" y="2" width="16" height="16" fill="currentColor"></rect></svg>
          <svg class="icon icon-settling" viewBox="0 0 20 20" aria-hidden="true"><path d="M2 10 Q6 2 10 10 T18 10" fill="none" stroke="currentColor" stroke-width="3"></path></svg>
          <svg class="icon icon-lifted" viewBox="0 0 20 20" aria-hidden="true"><circle cx="10" cy="10" r="7" fill="none" stroke="currentColor" stroke-width="2"></circle></svg>
          <span id="stable-text">nothing on the pad</span>
        </span>
        <span id="peak" hidden><span class="badge">PEAK</span><span id="peak-value"></span></span>
      </div>
    </div>
    <div id="controls">
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
      <button id="tare" type="button" hidden>Tare</button>
      <span id="tare-result" role="status"></span>
      <button id="weigh-added" type="button" hidden>Weigh what I add</button>
      <span id="weigh-added-step" role="status"></span>
    </div>
  </section>
  <section id="trend" class="card" aria-labelledby="trend-title">
    <h2 id="trend-title">Last 30 seconds</h2>
    <svg id="sparkline" viewBox="0 0 300 100" preserveAspectRatio="none" role="img" aria-label="Weight over the last 30 seconds">
      <line class="axis" x1="0" y1="99" x2="300" y2="99"></line>
      <polyline id="sparkline-line" points=""></polyline>
    </svg>
  </section>
  <section id="source-card" class="card" aria-labelledby="source-title">
    <h2 id="source-title">Source</h2>
    <dl id="source">
      <dt>Device</dt><dd id="device">–</dd>
      <dt>Gram model</dt><dd id="model">–</dd>
    </dl>
  </section>
</main>
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

  var latest = null, peak = null, peakDuringPress = false, status = null;
  var history = [], announced = "", renderQueued = false;
  var streamOpen = false, daemonUp = null;

  try {
    var saved = window.localStorage.getItem("forcescale-unit");
    if (saved && saved in UNITS) $("unit").value = saved;
  } catch (e) { /* storage may be off; grams it is */ }
  $("unit").addEventListener("change", function () {
    try { window.localStorage.setItem("forcescale-unit", unitName()); } catch (e) { }
    announced = "";
    render();
  });

  function setConnection() {
    var live = isLive();
    var state = live ? "live" : (streamOpen || daemonUp !== null || history.length ? "reconnecting" : "connecting");
    var text = live ? "live" : state === "connecting" ? "connecting…" : "reconnecting…";
    $("connection").setAttribute("data-state", state);
    $("connection-text").textContent = text;
    $("reconnecting").hidden = live || state === "connecting";
    $("reconnecting-reason").textContent = !streamOpen ? "the connection to this server is gone"
      : "forcescaled is not answering";
    $("content").setAttribute("data-stale", live && latest ? "false" : "true");
    if (latest) queueRender();
  }
  function isLive() { return streamOpen && daemonUp === true; }

  function render() {
    renderQueued = false;
    var reading = latest;
    $("weight-unit").textContent = unitName();
    if (peak) $("peak-value").textContent = weightText(peak.grams) + " " + unitName();
    if (!reading) return;
    var percent = percentOf(reading), state = stateOf(reading);
    // A stable reading shows its settled weight (the stable window's mean, protocol 1.3).
    var grams = typeof reading.settled_grams === "number" ? reading.settled_grams : reading.grams;
    var weight = weightText(grams);
    $("weight-value").textContent = weight;
    $("weight-value").setAttribute("data-grams", String(grams));
    $("percent").textContent = percent.text;
    var dial = $("dial");
    dial.setAttribute("aria-valuenow", String(percent.now));
    dial.setAttribute("aria-valuetext", weight + " " + unitName() + ", " + percent.text + " force, " + state.words);
    dial.setAttribute("data-stable", reading.stable ? "true" : "false");
    dial.setAttribute("data-saturated", reading.saturated ? "true" : "false");
    // Area grows with force, as the original's circle did.
    var force = Math.max(0, Math.min(1, reading.force));
    $("disc").setAttribute("r", (90 * Math.sqrt(force)).toFixed(2));
    $("peak-ring").setAttribute("visibility", peakDuringPress ? "visible" : "hidden");
    $("stable").setAttribute("data-state", state.key);
    $("stable-text").textContent = state.words;
    if (reading.device) $("device").textContent = reading.device;
    else if (status && status.device) $("device").textContent = status.device;
    if (reading.model) $("model").textContent = reading.model;
    drawSparkline();
    if (!isLive()) {
      // The last weight stays in view, dimmed, but nothing claims it is stable now, and
      // nothing is announced until readings flow again.
      $("stable").setAttribute("data-state", "lifted");
      $("stable-text").textContent = "no live reading";
      dial.setAttribute("aria-valuetext", weight + " " + unitName() + ", the last reading, not live");
      announced = "";
      return;
    }
    // Only stable weights are announced, once each; a lift lets the same weight be
    // announced again when it is put back.
    if (reading.contacts === 0) announced = "";
    else if (reading.stable) {
      var words = "Stable: " + weight + " " + unitName();
      if (words !== announced) { announced = words; $("announce").textContent = words; }
    }
  }
  function queueRender() {
    if (renderQueued) return;
    renderQueued = true;
    // A hidden tab gets no animation frames; render there at once so it is current when shown.
    if (document.hidden) render(); else window.requestAnimationFrame(render);
  }

  function drawSparkline() {
    var now = performance.now();
    while (history.length && now - history[0].at > WINDOW_MS) history.shift();
    var top = 385;
    history.forEach(function (point) { if (point.grams > top) top = point.grams; });
    var points = [], previous = null;
    history.forEach(function (point) {
      var x = (300 - (now - point.at) / WINDOW_MS * 300).toFixed(1);
      // Readings stop while nothing changes (a lifted pad): hold the last value until the
      // next one, a step rather than a slope that no reading carried.
      if (previous && point.at - previous.at > 150) points.push(x + "," + previous.y);
      var y = (99 - Math.max(0, point.grams) / top * 95).toFixed(1);
      points.push(x + "," + y);
      previous = { at: point.at, y: y };
    });
    $("sparkline-line").setAttribute("points", points.join(" "));
  }

  function onReading(event) {
    var reading;
    try { reading = JSON.parse(event.data); } catch (e) { return; }
    if (typeof reading.grams !== "number") return;
    if (latest && latest.contacts === 0 && reading.contacts > 0) peakDuringPress = false;
    latest = reading;
    addedFeed(reading);
    history.push({ at: performance.now(), grams: reading.grams });
    if (daemonUp !== true) { daemonUp = true; setConnection(); }
    if ($("content").getAttribute("data-stale") === "true") setConnection();
    queueRender();
  }
  function onPeak(event) {
    var message;
    try { message = JSON.parse(event.data); } catch (e) { return; }
    if (typeof message.grams !== "number") return;
    peak = message;
    peakDuringPress = true;
    $("peak").hidden = false;
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
      if (status && status.device && (!latest || !latest.device)) $("device").textContent = status.device;
      if (status && status.model && (!latest || !latest.model)) $("model").textContent = status.model;
      // Tare and the guided weighing are offered only where the server was started with
      // --allow-control.
      $("tare").hidden = body.control !== true;
      $("weigh-added").hidden = body.control !== true;
      if (daemonUp === null) { daemonUp = body.up === true; setConnection(); }
    }).catch(function () { /* the stream's state says what is wrong */ });
  }

  // "Weigh what I add": forcescale weigh --tare-first on the page (ScaleCore's AddedWeight,
  // the same rule): the steady contact is the zero, the daemon's tare untouched; what is
  // added within the same touch is weighed once a whole window of readings is stable again.
  var WINDOW_S = 0.5, added = null;
  function addedStart() {
    added = { step: "contact", samples: [], stableSince: null, moved: false, zero: null, zeroTime: 0 };
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
    if (reading.contacts === 0) {
      if (added.step === "object") {
        added.step = "done";
        addedShow("The contact was lifted before the object settled: nothing was weighed. Start again.");
      } else {
        added.samples = []; added.stableSince = null;
      }
      return;
    }
    var t = reading.time;
    if (!reading.stable) added.stableSince = null; else if (added.stableSince === null) added.stableSince = t;
    added.samples.push({ time: t, grams: reading.grams });
    while (added.samples.length && added.samples[0].time < t - WINDOW_S) added.samples.shift();
    var settled = added.stableSince !== null && t - added.stableSince >= WINDOW_S;
    if (added.step === "contact") {
      if (!settled) return;
      added.zero = addedWindow(); added.zeroTime = t; added.step = "object";
      addedShow("Zero taken at " + weightText(added.zero.mean) + " " + unitName() + ". Now add the object beside the contact, without lifting it…");
      return;
    }
    if (!reading.stable) added.moved = true;
    if (!settled || t - WINDOW_S < added.zeroTime) return;
    var total = addedWindow(), zero = added.zero;
    var error = Math.sqrt(zero.error * zero.error + total.error * total.error);
    if (!added.moved || Math.abs(total.mean - zero.mean) <= 3 * error) return;
    var calibration = status && status.model === "calibrated" && status.calibration && typeof status.calibration.uncertainty === "number"
      ? status.calibration.uncertainty : 0;
    var uncertainty = Math.sqrt(4 * error * error + calibration * calibration);
    added.step = "done";
    var result = weightText(total.mean - zero.mean) + " " + unitName() + " ± " + weightText(uncertainty) + " " + unitName() + " added";
    $("weigh-added-step").setAttribute("data-grams", String(total.mean - zero.mean));
    addedShow(result);
  }
  $("weigh-added").addEventListener("click", addedStart);

  $("tare").addEventListener("click", function () {
    $("tare-result").textContent = "taring…";
    fetch("api/tare", { method: "POST" }).then(function (response) {
      $("tare-result").textContent = response.ok ? "tared" : "tare refused (" + response.status + ")";
    }).catch(function () { $("tare-result").textContent = "tare failed: no connection"; });
  });

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
  // The sparkline scrolls even while no reading comes.
  window.setInterval(function () { if (latest) drawSparkline(); }, 1000);
  render();
  setConnection();
  refreshStatus();
  connect();
})();
</script>
</body>
</html>
"""#
}
