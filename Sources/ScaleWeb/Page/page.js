"use strict";
(function () {
  var $ = function (id) { return document.getElementById(id); };
  // The units, as forcescale-web put ScaleCore's MassUnit into the page (#units): for each,
  // its grams per unit and the decimals the CLI's gauge writes it with, in the CLI's order.
  // The unit menu offers these, and nothing else.
  var UNITS = {};
  JSON.parse($("units").textContent).units.forEach(function (unit) {
    UNITS[unit.symbol] = { grams: unit.grams_per_unit, decimals: unit.decimals };
    var option = document.createElement("option");
    option.value = unit.symbol;
    option.textContent = unit.symbol + " (" + unit.name + ")";
    $("unit").appendChild(option);
  });
  var WINDOW_MS = 30000;
  // The plot's area in its viewBox: x from LEFT (30 s ago) to RIGHT (now), y from TOP
  // (the highest tick) to BOTTOM (0 g).
  var PLOT = { left: 44, right: 312, top: 18, bottom: 110 };
  var SVG = "http://www.w3.org/2000/svg";

  // ScaleDisplay's fixed(_:decimals:), for a unit's decimals from #units: exactly
  // `decimals` decimals, half away from zero (the browser tests hold it to the CLI's text).
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
  // ReadingMessage.lowerBoundText: a saturated weight is a lower bound, never a weight.
  function boundText(grams) { return "at least " + weightText(grams) + " " + unitName() + " (saturated)"; }
  function stateOf(reading) {
    if (reading.contacts === 0) return { key: "lifted", words: "nothing on the pad" };
    if (reading.saturated) {
      var shown = typeof reading.settled_grams === "number" ? reading.settled_grams : reading.grams;
      return { key: "saturated", words: boundText(shown) + ": weigh a lighter object" };
    }
    // ReadingMessage.beyondCalibrationText's words: the grams are an extrapolation.
    var beyond = "";
    if (typeof reading.beyond_calibration === "number") {
      var tenths = Math.round(reading.beyond_calibration * 10);
      beyond = ", beyond the heaviest calibration weight, " + (tenths % 10 === 0 ? String(tenths / 10) : (tenths / 10).toFixed(1)) + " g";
    }
    if (reading.stable) return { key: "stable", words: "stable" + beyond };
    // A weight still moving steadily says how fast (protocol 1.8's `drift`), never "stable".
    if (typeof reading.drift === "number") return { key: "drifting", words: driftText(reading.drift) + beyond };
    return { key: "settling", words: "settling" + beyond };
  }
  // ReadingMessage.driftText: "drifting −6.0 g/s" in the unit chosen, a minus when falling.
  function driftText(gramsPerSecond) {
    return "drifting " + weightText(gramsPerSecond).replace(/^-/, "\u2212") + " " + unitName() + "/s";
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
    var weight = (reading.saturated ? "≥" : "") + weightText(grams);
    part("weight-value").textContent = weight;
    part("weight-value").setAttribute("data-grams", String(grams));
    part("percent").textContent = percent.text;
    var dial = part("dial");
    dial.setAttribute("aria-valuenow", String(percent.now));
    dial.setAttribute("aria-valuetext", (reading.saturated ? boundText(grams) : weight + " " + unitName()) + ", " + percent.text + " force, " + state.words);
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
    // Stable weights are announced, once each, and so is a weight that starts drifting
    // (once, with its rate then: not at every change of it); a lift lets the same weight
    // be announced again when it is put back. With several devices, the words name the
    // device.
    var several = Object.keys(scales).length > 1;
    if (reading.contacts === 0) scale.announced = "";
    else if (reading.stable) {
      var words = (several ? displayName(scale) + ": stable: " : "Stable: ") + (reading.saturated ? boundText(grams) : weight + " " + unitName());
      if (words !== scale.announced) { scale.announced = words; $("announce").textContent = words; }
    } else if (typeof reading.drift === "number" && scale.announced !== "drifting") {
      scale.announced = "drifting";
      var drifting = driftText(reading.drift);
      $("announce").textContent = (several ? displayName(scale) + ": " + drifting : drifting.charAt(0).toUpperCase() + drifting.slice(1)) + ", not a weight yet";
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
      $("weigh-added-grab-choice").hidden = !control;
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
  // With "Take the pad while weighing" the daemon grabs the pad (api/grab, the daemon's
  // GRAB) from the start until the weight is shown, the contact is lifted or the flow starts
  // again; the daemon gives it back by itself after the bound its reply names.
  var WINDOW_S = 0.5, added = null, grab = null;
  function addedStart() {
    added = { step: "contact", device: null, samples: [], stableSince: null, moved: false, zero: null, zeroTime: 0 };
    $("weigh-added").textContent = "Start again";
    addedShow("Put a contact on the pad (a finger, a coin, a metal lid) and keep it still…");
    grabRelease().then(function () { if ($("weigh-added-grab").checked && added && added.step !== "done") grabTake(); });
  }
  function grabShow(text) { $("weigh-added-grab-state").textContent = text; }
  function grabTake() {
    var only = statusDevices.length === 1 ? statusDevices[0].device : null;
    grabShow("Taking the pad…");
    var held = { device: only, timer: null };
    grab = held;
    fetch("api/grab" + (only ? "?device=" + encodeURIComponent(only) : ""), { method: "POST" }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (grab !== held) return;
        if (!response.ok || body.grabbed !== true) {
          grab = null;
          grabShow("The pad could not be taken" + (body.error ? ": " + body.error : " (" + response.status + ")") + "; weighing with the desktop seeing it.");
          return;
        }
        held.device = body.device || only;
        $("weigh-added-step").parentNode.setAttribute("data-grabbed", "true");
        grabShow("The pad" + (held.device ? " (" + held.device + ")" : "") + " is taken: the desktop sees nothing of it until the weighing ends (" + body.seconds + " s at most).");
        held.timer = window.setTimeout(function () {
          if (grab !== held) return;
          grab = null;
          $("weigh-added-step").parentNode.removeAttribute("data-grabbed");
          grabShow("The pad was given back: a grab lasts " + body.seconds + " s at most.");
        }, body.seconds * 1000);
      });
    }).catch(function () { if (grab === held) { grab = null; grabShow("The pad could not be taken: no connection to this server."); } });
  }
  function grabRelease() {
    var held = grab;
    if (!held) return Promise.resolve();
    grab = null;
    if (held.timer !== null) window.clearTimeout(held.timer);
    $("weigh-added-step").parentNode.removeAttribute("data-grabbed");
    var query = "?enable=false" + (held.device ? "&device=" + encodeURIComponent(held.device) : "");
    return fetch("api/grab" + query, { method: "POST" }).then(function () {
      grabShow("The pad was given back.");
    }).catch(function () { grabShow("The pad could not be given back from here; the daemon gives it back within 60 s."); });
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
        grabRelease();
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
    // A steady drift is the contact creeping, not the object landing (AddedWeight's rule).
    if (!reading.stable && typeof reading.drift !== "number") added.moved = true;
    if (!settled || t - WINDOW_S < added.zeroTime) return;
    var total = addedWindow(), zero = added.zero;
    var error = Math.sqrt(zero.error * zero.error + total.error * total.error);
    if (!added.moved || Math.abs(total.mean - zero.mean) <= 3 * error) return;
    var calibration = calibrationOf(device);
    var uncertainty = Math.sqrt(4 * error * error + calibration * calibration);
    added.step = "done";
    grabRelease();
    var result = weightText(total.mean - zero.mean) + " " + unitName() + " ± " + weightText(uncertainty) + " " + unitName() + " added" + where;
    $("weigh-added-step").setAttribute("data-grams", String(total.mean - zero.mean));
    addedShow(result);
  }
  $("weigh-added").addEventListener("click", addedStart);

  // History: the force log's sessions from api/sessions, a page at a time, newest first;
  // a session opens to its plot (the SVG `forcescale log plot` draws), its stable weights,
  // its PEAKs and its downloads. Without a log, the server's answer says how to switch
  // logging on, and the page shows it. Times are the browser's locale's everywhere
  // (toLocaleString): the plot is asked for without its time of day (`started=none`), so
  // that the picture never shows the start another way than the words beside it.
  var HISTORY_PAGE = 10, historyBefore = null, historyNext = null, historySessions = [], openSession = null;
  var BASE_TITLE = document.title;
  function localTime(seconds) { return new Date(seconds * 1000).toLocaleString(); }
  function lengthText(session) {
    return typeof session.duration === "number" ? fixed(session.duration, 1) + " s" : "still on (open)";
  }
  // A saturated weight of the log (`peak_saturated`, `stable_saturated`, a stable weight's
  // `saturated`) is a lower bound: "at least …".
  function gramsText(grams, saturated) {
    if (typeof grams !== "number") return "none";
    return saturated === true ? boundText(grams) : weightText(grams) + " " + unitName();
  }
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
      button.addEventListener("click", function () {
        if (shownSession === session.session) $("session-title").focus(); else go(shownBefore, session.session);
      });
      first.appendChild(button);
      row.appendChild(first);
      var peaks = Array.isArray(session.peaks) ? session.peaks.length : 0;
      // Each cell names its column (data-label), which a narrow screen's card shows before
      // the value; the weights are marked so that the card puts them first.
      [[session.device, "", "Device"], [localTime(session.started), "", "Started"], [lengthText(session), "number", "Length"],
       [String(session.readings), "number", "Readings"], [gramsText(session.peak_grams, session.peak_saturated), "number session-weight", "Peak"],
       [gramsText(session.stable_grams, session.stable_saturated), "number session-weight", "Weight taken"], [String(peaks), "number", "PEAKs"]].forEach(function (cell) {
        var td = document.createElement("td");
        td.textContent = cell[0];
        if (cell[1]) td.className = cell[1];
        td.setAttribute("data-label", cell[2]);
        td.setAttribute("role", "cell");
        row.appendChild(td);
      });
      row.setAttribute("role", "row");
      first.setAttribute("role", "cell");
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
      return response.json().then(function (body) { return { ok: response.ok, status: response.status, body: body }; });
    }).then(function (answer) {
      // The URL moved on meanwhile: this answer is no longer wanted.
      if (shownSession !== id) return;
      if (answer.status === 404 && answer.body.log !== "missing") {
        showMissing(id, "Session " + id + " is not in the force log: it may have been removed, or the link is from another log. "
          + "The sessions it has are listed above.");
        return;
      }
      if (!answer.ok) { $("history-status").textContent = answer.body.error || "The session could not be loaded."; return; }
      var session = answer.body.session;
      openSession = session;
      $("session-missing").hidden = true;
      $("session-detail").hidden = false;
      $("session-detail").setAttribute("data-session", String(session.session));
      $("session-title").textContent = "Session " + session.session + " on " + session.device;
      document.title = "Session " + session.session + " on " + session.device + " – " + BASE_TITLE;
      $("session-summary").textContent = "Started " + localTime(session.started) + "; " + lengthText(session) + "; "
        + session.readings + " readings; heaviest " + gramsText(session.peak_grams, session.peak_saturated) + ".";
      var base = "api/sessions/" + session.session;
      $("session-plot").alt = "Plot of session " + session.session + " on " + session.device
        + ": grams against seconds since it started, each PEAK marked; heaviest " + (session.peak_saturated ? "at least " : "") + fixed(session.peak_grams, 1) + " g.";
      // The picture without its time of day (the summary above gives it in the reader's
      // locale), and drawn for a narrow screen on one.
      $("session-plot-narrow").srcset = base + ".svg?layout=narrow&started=none";
      $("session-plot").src = base + ".svg?started=none";
      $("download-csv").href = base + ".csv";
      $("download-json").href = base + ".json";
      $("download-svg").href = base + ".svg";
      var weights = $("session-weights"), peaks = $("session-peaks");
      weights.textContent = "";
      peaks.textContent = "";
      (answer.body.stable_weights || []).forEach(function (weight) {
        var item = document.createElement("li");
        item.className = "stable-weight";
        item.textContent = gramsText(weight.grams, weight.saturated) + ", stable for " + fixed(weight.to - weight.from, 1) + " s from " + localTime(weight.from);
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
  // A session the URL names that the log does not have (or a name that is no session's).
  function showMissing(id, text) {
    openSession = null;
    $("session-detail").hidden = true;
    $("session-missing").hidden = false;
    $("session-missing").textContent = text;
    document.title = "Session " + id + " not found – " + BASE_TITLE;
    drawHistory();
  }
  // Back to the list: focus returns to the button of the session that was open.
  function closeSession(previous) {
    openSession = null;
    $("session-detail").hidden = true;
    $("session-missing").hidden = true;
    document.title = BASE_TITLE;
    drawHistory();
    var button = previous === null ? null : document.querySelector('#sessions-body tr[data-session="' + previous + '"] .open-session');
    if (button) button.focus();
  }

  // The History's place is in the URL, so that a session can be linked, bookmarked and
  // reloaded, and Back and Forward walk what was opened: `#session-12` opens session 12,
  // `#sessions-before-40` shows the page of sessions older than 40 ("Older sessions"),
  // `#sessions-before-40/session-12` both. Every change is a new entry of the browser's
  // history; route() makes the page what the URL says, whoever changed it.
  var shownBefore, shownSession = null;
  function historyHash(before, session) {
    var parts = [];
    if (before !== null && before !== undefined) parts.push("sessions-before-" + before);
    if (session !== null && session !== undefined) parts.push("session-" + session);
    return parts.join("/");
  }
  function parseHash() {
    var wanted = { before: null, session: null, malformed: null };
    var hash = location.hash.replace(/^#/, "");
    try { hash = decodeURIComponent(hash); } catch (e) { /* kept as it came */ }
    hash.split("/").forEach(function (part) {
      var match;
      if ((match = /^sessions-before-([0-9]+)$/.exec(part))) wanted.before = Number(match[1]);
      else if ((match = /^session-([0-9]+)$/.exec(part))) wanted.session = Number(match[1]);
      else if ((match = /^session-(.*)$/.exec(part))) wanted.malformed = match[1];
    });
    return wanted;
  }
  function go(before, session) {
    var hash = historyHash(before, session);
    if (hash) { location.hash = hash; return; }
    history.pushState(null, "", location.pathname + location.search);
    route();
  }
  function route() {
    var wanted = parseHash();
    if (wanted.before !== shownBefore) { shownBefore = wanted.before; loadHistory(wanted.before); }
    if (wanted.malformed !== null) {
      shownSession = null;
      showMissing(wanted.malformed, "“" + wanted.malformed + "” is not a session: a session is a number, as in #session-12.");
      return;
    }
    if (wanted.session === shownSession && (wanted.session !== null || $("session-missing").hidden)) return;
    var previous = shownSession;
    shownSession = wanted.session;
    if (wanted.session === null) closeSession(previous); else showSession(wanted.session);
  }
  window.addEventListener("hashchange", route);
  window.addEventListener("popstate", route);
  $("history-refresh").addEventListener("click", function () { loadHistory(historyBefore); });
  $("history-older").addEventListener("click", function () { if (historyNext !== null) go(historyNext, shownSession); });
  $("history-newest").addEventListener("click", function () { go(null, shownSession); });

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
  route();
})();
