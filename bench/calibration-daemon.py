#!/usr/bin/env python3
"""The daemon path of bench/calibration: one synthetic device served by forcescaled.

Usage: calibration-daemon.py BENCH FORCESCALED DEVICE DIRECTORY SEED

Writes a recording (forcescale-calibration-bench record) of the device with the five
calibration weights put on in turn, then the sweep four times, starts forcescaled on it
(--replay, a fresh state directory), and talks to it on its socket as guided calibration
does: each calibration weight is measured by the daemon (CALIBRATE with "add":false: the
mean of the stable window, with its spread); before each sweep the curve is set to the
points of 1, 2, 3 or 5 weights (CALIBRATION with "curve"), and the READING lines of each
sweep weight, once it rests (0.8 s after it was put down), are kept: the daemon's grams and
raw pressure. The grams of piecewise linear through the same points and the same raw values
come from forcescale-calibration-bench piecewise. Prints one JSON object per point count.
"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_session import DaemonSession  # noqa: E402

bench, forcescaled, device, directory, seed = sys.argv[1:6]
CALIBRATION = [5.7, 20, 57, 180, 300]
SETS = {1: [180], 2: [20, 180], 3: [5.7, 20, 180], 5: [5.7, 20, 57, 180, 300]}
SWEEP = [2, 5, 10, 20, 35, 50, 75, 100, 150, 200, 250, 300, 350, 385]
HOLD, GAP, SETTLED = 1.6, 0.7, 0.8

recording = os.path.join(directory, device + ".events")
weights = CALIBRATION + SWEEP * len(SETS)
subprocess.run([bench, "record", device, recording, seed, str(HOLD), str(GAP)] + [str(w) for w in weights], check=True)
sock_path = os.path.join(directory, device + ".sock")
daemon = subprocess.Popen([forcescaled, "--replay", recording, "--socket", sock_path, "--config", "/dev/null",
                           "--state-dir", os.path.join(directory, device + ".state"),
                           "--no-rumble"], stderr=open(os.path.join(directory, device + ".log"), "w"))
try:
    session = DaemonSession(sock_path, daemon, "calibration-daemon.py: " + device, directory)
    send, reply = session.send, session.reply

    def readings():
        while True:
            message = session.next_message()
            if message["class"] == "READING":
                yield message

    stream_of = readings()
    touching = False
    hold = -1
    points = []
    start = None
    results = {count: [] for count in SETS}
    passes = list(SETS)
    uncertainties = {}
    models = {}
    for reading in stream_of:
        if reading["contacts"] > 0 and not touching:
            touching, hold, start = True, hold + 1, reading["time"]
            if hold < len(CALIBRATION):
                send({"class": "CALIBRATE", "grams": CALIBRATION[hold], "add": False})
                point = reply("CALIBRATE")
                points.append({"raw": point["raw"], "grams": CALIBRATION[hold], "sd": point.get("sd"), "n": point.get("n")})
        elif reading["contacts"] == 0 and touching:
            touching = False
            if hold == len(SWEEP) * len(SETS) + len(CALIBRATION) - 1:
                break
            # Before each pass of the sweep, the curve of that pass's points.
            if hold >= len(CALIBRATION) - 1 and (hold - len(CALIBRATION) + 1) % len(SWEEP) == 0:
                count = passes[(hold - len(CALIBRATION) + 1) // len(SWEEP)]
                chosen = [p for p in points if p["grams"] in SETS[count]]
                send({"class": "CALIBRATION", "curve": [{k: v for k, v in p.items() if v is not None} for p in chosen]})
                answer = reply("CALIBRATION")
                models[count] = answer.get("model")
                uncertainties[count] = answer.get("uncertainty")
        elif touching and hold >= len(CALIBRATION) and reading["time"] - start >= SETTLED:
            index = hold - len(CALIBRATION)
            count = passes[index // len(SWEEP)]
            results[count].append((SWEEP[index % len(SWEEP)], reading["raw"], reading["grams"]))
finally:
    daemon.terminate()
    daemon.wait()

for count, rows in results.items():
    chosen = [p for p in points if p["grams"] in SETS[count]]
    spec = ",".join("%r:%r" % (p["raw"], p["grams"]) for p in chosen)
    raws = [str(raw) for _, raw, _ in rows]
    piecewise = subprocess.run([bench, "piecewise", device, spec] + raws, check=True, capture_output=True, text=True).stdout.split()
    print(json.dumps({
        "device": device, "points": count, "model": models.get(count), "uncertainty": uncertainties.get(count),
        "measured": chosen,
        "readings": [{"true": t, "raw": r, "fitted": g, "piecewise": float(p)} for (t, r, g), p in zip(rows, piecewise)],
    }))
