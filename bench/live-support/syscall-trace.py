#!/usr/bin/env python3
"""The analysis half of bench/syscall-trace: `syscall-trace.py WORK FRAMES`. Reads the
WORK/READER-ROUND.trace files (ftrace's text: the system calls, switches and page faults of
one reader), their .pid and .play files, and prints per reader, over all its rounds:

- its CPU time per frame while on a CPU (from the switches in and out), and against the
  epoll floor's; its wake-ups, preemptions and page faults;
- per system call: calls per frame and the CPU time each took (the part of it on a CPU);
- per kind of wake-up (one that sends or writes a line, one that does not), the time spent
  in user space (from a system call's return to the next entry: the program's code, and the
  kernel's own entry and exit work) and in system calls, as medians.

A wake-up runs from a switch onto a CPU to the next switch off it."""
import collections
import glob
import os
import re
import statistics
import sys

work, frames = sys.argv[1], int(sys.argv[2])

# x86-64 numbers of the calls these readers make.
NAMES = {0: "read", 1: "write", 7: "poll", 20: "writev", 44: "sendto", 46: "sendmsg", 202: "futex",
         228: "clock_gettime", 232: "epoll_wait", 233: "epoll_ctl", 281: "epoll_pwait", 286: "timerfd_settime"}
# Calls that put a line out: a wake-up with one of these "sends a line".
OUTPUT = {1, 20, 44, 46}
LINE = re.compile(r"^\s*.+?-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
SWITCH = re.compile(r"prev_pid=(\d+) .*?prev_state=(\S+) ==> .*?next_pid=(\d+)")


class Reader:
    def __init__(self):
        self.on_cpu = 0.0
        self.wake_ups = 0
        self.preempted = 0
        self.calls = collections.Counter()
        self.call_time = collections.Counter()
        self.kinds = collections.defaultdict(lambda: ([], []))  # kind -> (user times, system times)
        self.page_faults = 0
        self.play_seconds = 0.0


def analyse(path, pid, reader):
    with open(path) as trace:
        header = "".join(next(trace, "") for _ in range(3))
        counts = re.search(r"entries-in-buffer/entries-written: (\d+)/(\d+)", header)
        if counts and counts.group(1) != counts.group(2):
            sys.exit(f"syscall-trace: {path}: the trace buffer overflowed ({counts.group(1)} of {counts.group(2)} events kept); trace fewer frames (BENCH_TRACE_FRAMES)")
        running_since = None  # on a CPU since
        mark = None           # the last boundary: a switch in, a call's entry or return
        in_call = None        # the call being made, if any
        user = system = 0.0
        outputs = False
        for text in trace:
            match = LINE.match(text)
            if not match:
                continue
            task, time, event, rest = int(match.group(1)), float(match.group(2)), match.group(3), match.group(4)
            if event == "sched_switch":
                switch = SWITCH.search(rest)
                previous, state, following = int(switch.group(1)), switch.group(2), int(switch.group(3))
                if previous == pid and running_since is not None:
                    if in_call is None:
                        user += time - mark
                    else:
                        system += time - mark
                        reader.call_time[in_call] += time - mark
                    reader.on_cpu += time - running_since
                    kind = reader.kinds["sends a line" if outputs else "reads frames only"]
                    kind[0].append(user)
                    kind[1].append(system)
                    if state.startswith("R"):
                        reader.preempted += 1
                    running_since = None
                if following == pid:
                    running_since = mark = time
                    user = system = 0.0
                    outputs = False
                    reader.wake_ups += 1
                continue
            if task != pid or running_since is None:
                continue
            if event == "page_fault_user":
                reader.page_faults += 1
                continue
            if event == "sys_enter":
                number = int(re.search(r"NR (\d+)", rest).group(1))
                user += time - mark
                mark = time
                in_call = number
                reader.calls[number] += 1
                outputs = outputs or number in OUTPUT
            elif event == "sys_exit" and in_call is not None:
                system += time - mark
                reader.call_time[in_call] += time - mark
                mark = time
                in_call = None


readers = collections.OrderedDict()
rounds = set()
for name in ["epoll-floor", "send-10", "read", "forcescaled", "forcescaled-one-cpu"]:
    for path in sorted(glob.glob(os.path.join(work, f"{name}-*.trace"))):
        # forcescaled-*.trace also matches forcescaled-one-cpu-1.trace.
        round_number = path[len(os.path.join(work, name)) + 1:-len(".trace")]
        if not round_number.isdigit():
            continue
        rounds.add(round_number)
        with open(path[:-len(".trace")] + ".pid") as pid_file:
            pid = int(pid_file.read())
        reader = readers.setdefault(name, Reader())
        analyse(path, pid, reader)
        with open(path[:-len(".trace")] + ".play") as play:
            started, ended = (float(x) for x in play.read().split())
        reader.play_seconds += ended - started
if "epoll-floor" not in readers:
    sys.exit(f"syscall-trace: no traces in {work}")

LABELS = {
    "epoll-floor": "the epoll floor (floor-read --epoll)",
    "send-10": "the epoll floor sending a line every 10th frame to a client",
    "read": "forcescale read --json",
    "forcescaled": "forcescaled + 1 watcher",
    "forcescaled-one-cpu": "forcescaled + 1 watcher, both held on CPU 0",
}
total_frames = frames * len(rounds)
floor = readers["epoll-floor"].on_cpu / total_frames
played = sum(reader.play_seconds for reader in readers.values()) / len(readers) / len(rounds)
print(f"{len(rounds)} round(s) of {frames} frames per reader, played at {frames / played:.0f} frames/s on average (1 ms apart in the recording);")
print("CPU time while on a CPU, traced")
print(f"(tracing adds its own cost to every call and switch: compare readers here, not with bench/live)\n")
print(f"  {'reader':62s} {'µs/frame':>9s} {'x floor':>8s} {'wake-ups/frame':>15s} {'preempted':>10s} {'page faults':>12s}")
for name, reader in readers.items():
    per_frame = reader.on_cpu / total_frames * 1e6
    print(f"  {LABELS[name]:62s} {per_frame:9.1f} {per_frame / (floor * 1e6):7.2f}x {reader.wake_ups / total_frames:15.2f} {reader.preempted:10d} {reader.page_faults:12d}")
print("\nSystem calls: calls per frame, and µs on a CPU each")
for name, reader in readers.items():
    cells = [f"{NAMES.get(number, number)} {count / total_frames:.2f} ({reader.call_time[number] / count * 1e6:.0f} µs)"
             for number, count in reader.calls.most_common()]
    print(f"  {name:20s} " + ", ".join(cells))
print("\nWake-ups by kind: count, and medians of µs in user space | in system calls")
for name, reader in readers.items():
    cells = []
    for kind in ["reads frames only", "sends a line"]:
        users, systems = reader.kinds.get(kind, ([], []))
        if users:
            cells.append(f"{kind}: {len(users)}, {statistics.median(users) * 1e6:.0f} | {statistics.median(systems) * 1e6:.0f}")
    print(f"  {name:20s} " + "; ".join(cells))
