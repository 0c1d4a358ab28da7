#!/usr/bin/env python3
"""The daemon path of bench/calibration, weight by weight through the CLI, in every order.

Usage: calibration-orders.py BENCH FORCESCALED FORCESCALE DEVICE ORDER DIRECTORY SEED

ORDER is ascending, descending or mixed: the three calibration weights (a coin of 5.7 g, a
letter of 20 g, an apple of 180 g) in that order. Writes a recording of the synthetic
DEVICE (forcescale-calibration-bench record) with the three weights (3 s each), then the
sweep (1.6 s each), serves it with forcescaled --replay (a fresh state directory, default
settings), and does what a person does: when each calibration weight has been put on, runs
`forcescale calibrate --grams G` and lets it finish. It watches the READING lines all the
while and prints one JSON object: the points stored, the curve's model and uncertainty, each
sweep weight's readings once it has rested 0.8 s (true grams, the grams shown: settled_grams
while stable, grams otherwise; whether
past the heaviest calibration weight), and for every weight the time from coming to rest
(the end of its landing, 300 ms after it touches) to its first stable reading.
"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_session import DaemonSession  # noqa: E402

bench, forcescaled, forcescale, device, order, directory, seed = sys.argv[1:8]
WEIGHTS = {"ascending": [5.7, 20, 180], "descending": [180, 20, 5.7], "mixed": [20, 180, 5.7]}[order]
SWEEP = [2, 5, 10, 20, 35, 50, 75, 100, 150, 200, 250, 300, 350, 385]
HOLD, CALIBRATION_HOLD, GAP, SETTLED, LANDING = 1.6, 3.0, 0.7, 0.8, 0.3

name = "%s-%s" % (device, order)
recording = os.path.join(directory, name + ".events")
spec = ["%s@%s" % (w, CALIBRATION_HOLD) for w in WEIGHTS] + [str(w) for w in SWEEP]
subprocess.run([bench, "record", device, recording, seed, str(HOLD), str(GAP)] + spec, check=True)
sock_path = os.path.join(directory, name + ".sock")
daemon = subprocess.Popen([forcescaled, "--replay", recording, "--socket", sock_path, "--config", "/dev/null",
                           "--state-dir", os.path.join(directory, name + ".state"), "--no-rumble"],
                          stderr=open(os.path.join(directory, name + ".log"), "w"))
truths = WEIGHTS + SWEEP
touch, touching, start, first_stable = -1, False, None, {}
readings, stored, calibrating, calibration = [], [], None, None
try:
    session = DaemonSession(sock_path, daemon, "calibration-orders.py: " + name, directory)
    send, reply = session.send, session.reply

    def finish_calibrating():
        global calibrating
        if calibrating is None:
            return
        out, err = calibrating.communicate(timeout=60)
        if calibrating.returncode != 0:
            raise SystemExit("calibration-orders.py: %s: forcescale calibrate: %s" % (name, err.strip()))
        stored.append(out.strip().splitlines()[-1])
        calibrating = None

    while True:
        reading = session.next_message()
        if reading["class"] != "READING":
            continue
        if reading["contacts"] > 0 and not touching:
            touching, touch, start = True, touch + 1, reading["time"]
            if touch < len(WEIGHTS):
                calibrating = subprocess.Popen(
                    [forcescale, "calibrate", "--grams", str(WEIGHTS[touch]), "--timeout", "60", "--socket", sock_path],
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        elif reading["contacts"] == 0 and touching:
            touching = False
            finish_calibrating()
            if touch == len(WEIGHTS) - 1:
                send({"class": "CALIBRATION"})
                calibration = reply("CALIBRATION")
            if touch == len(truths) - 1:
                break
            continue
        if not touching:
            continue
        if reading["stable"] and touch not in first_stable:
            first_stable[touch] = reading["time"] - (start + LANDING)
        if touch >= len(WEIGHTS) and reading["time"] - start >= SETTLED:
            # The weight the scale shows: the settled weight while stable, the frame's otherwise.
            readings.append({"true": truths[touch], "grams": reading.get("settled_grams", reading["grams"]), "raw": reading["raw"],
                             "beyond": reading.get("beyond_calibration")})
finally:
    daemon.terminate()
    daemon.wait()

print(json.dumps({
    "device": device, "order": order, "weights": WEIGHTS, "stored": stored,
    "model": calibration.get("model"), "uncertainty": calibration.get("uncertainty"),
    "tare": calibration.get("tare", 0.0),
    "readings": readings,
    "settling": [first_stable.get(i) for i in range(len(truths))],
}))
