#!/usr/bin/env python3
"""The analysis half of bench/wakeup-trace: `wakeup-trace.py WORK PROGRAM`. WORK/exec.log
(QEMU's -d exec log), WORK/maps.txt (the reader's memory map) and WORK/PROGRAM (forcescale
or forcescaled, for its symbols) in; per kind of wake-up, the blocks entered through a
lookup, the distinct ones, their code pages and functions, out.

A wake-up is the stretch between two entries of EventLoop.run's most entered block (the loop
comes back there after each epoll_wait); only the streaming part of the log counts, from the
first to the last block of the stability detector, which runs per frame."""
import bisect
import collections
import os
import re
import subprocess
import sys

work = sys.argv[1]
program = os.path.join(work, sys.argv[2] if len(sys.argv) > 2 else "forcescale")

# The executable mappings: (start, end, file name).
mappings = []
for line in open(os.path.join(work, "maps.txt")):
    fields = line.split()
    if len(fields) >= 6 and fields[1].startswith("r-x"):
        start, end = (int(x, 16) for x in fields[0].split("-"))
        mappings.append((start, end, fields[5]))
mappings.sort()
own = [m for m in mappings if os.path.realpath(m[2]) == os.path.realpath(program)]
if not own:
    sys.exit(f"wakeup-trace: {program} is not in {work}/maps.txt")
# The program's load address: its first mapping (the ELF headers) is the lowest of its file.
base = min(int(line.split()[0].split("-")[0], 16) for line in open(os.path.join(work, "maps.txt"))
           if len(line.split()) >= 6 and os.path.realpath(line.split()[5]) == os.path.realpath(program))

symbols = []
for line in subprocess.run(["nm", "-S", "--defined-only", program], capture_output=True, text=True, check=True).stdout.splitlines():
    fields = line.split()
    if len(fields) == 4 and fields[2] in "tTwW":
        symbols.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
symbols.sort()
starts = [s[0] for s in symbols]
names = {}


def function(pc):
    """The function a block is in: a symbol of the program, or the library's file name."""
    if pc in names:
        return names[pc]
    name = None
    index = bisect.bisect_right(mappings, (pc, float("inf"), "")) - 1
    if index >= 0 and mappings[index][0] <= pc < mappings[index][1]:
        start, end, path = mappings[index]
        if os.path.realpath(path) == os.path.realpath(program):
            offset = pc - base
            at = bisect.bisect_right(starts, offset) - 1
            if at >= 0 and offset < symbols[at][0] + symbols[at][1]:
                name = symbols[at][2]
            else:
                name = "(plt)"
        else:
            name = os.path.basename(path)
    names[pc] = name
    return name


pcs = []
# With BENCH_TRACE_INSTRUCTIONS, QEMU also logs each block's instructions when it translates
# it (-d in_asm: "IN:", then "0xADDRESS:  BYTES  INSTRUCTION" lines), and every execution of a
# block rather than only the entries through a lookup (-d nochain).
instructions = {}
INSTRUCTION = re.compile(r"(?:[0-9a-f]{2} )*(?:[0-9a-f]{2}$)?\s*(.*)")
block = None
for line in open(os.path.join(work, "exec.log"), errors="replace"):
    # Trace CPU: HOST-TB [CS_BASE/PC/FLAGS/CFLAGS] SYMBOL
    if line.startswith("Trace "):
        block = None
        pc = int(line.split()[3].split("/")[1], 16)
        if function(pc) is not None:
            pcs.append(pc)
    elif line.startswith("IN:"):
        block = []
    elif block is not None:
        fields = line.split(None, 1)
        if not fields or fields[0].startswith("-"):
            block = None  # the block's end
            continue
        if not fields[0].startswith("0x"):
            continue
        if not block:
            instructions[int(fields[0].rstrip(":"), 16)] = block
        # The bytes, then the instruction. A long instruction's last bytes come on a line of
        # their own, with no instruction.
        text = INSTRUCTION.match(fields[1]).group(1).strip()
        if text:
            block.append(" ".join(text.split()))
counted = "executed" if instructions else "entered"
frames = [i for i, pc in enumerate(pcs) if "StabilityDetector" in names[pc]]
if not frames:
    sys.exit("wakeup-trace: no frame was processed in the log (did the reader get the events?)")
stream = pcs[frames[0]:frames[-1] + 1]
loop = collections.Counter(pc for pc in stream if names[pc] == "$s10ScalePOSIX9EventLoopC3runyyAA5ErrnoVYKF")
if not loop:
    sys.exit("wakeup-trace: EventLoop.run not found in the log")
mark = loop.most_common(1)[0][0]
wakeups, current = [], []
for pc in stream:
    if pc == mark and current:
        wakeups.append(current)
        current = []
    current.append(pc)


def kind(wakeup):
    if sum(1 for pc in wakeup if names[pc].startswith("libevdev")) > 1000:
        return "libevdev catching up"
    if any("ReadingMessage" in names[pc] or "PeakMessage" in names[pc] for pc in wakeup):
        return "writes a line"
    return "reads frames only"


def demangled(name):
    if not name.startswith("$s"):
        return name
    try:
        return subprocess.run(["swift", "demangle", "--simplified", "--compact", name], capture_output=True, text=True).stdout.strip() or name
    except OSError:
        return name


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def median_wakeup(members):
    """The wake-up of the median number of distinct blocks: the one whose functions are shown."""
    return sorted(members, key=lambda w: len(set(w)))[len(members) // 2]


groups = collections.defaultdict(list)
for wakeup in wakeups:
    groups[kind(wakeup)].append(wakeup)
print(f"{len(wakeups)} wake-ups in the stream; medians per wake-up:")
print(f"  {'kind':<22} {'count':>5} {'blocks ' + counted:>16} {'distinct':>9} {'code pages':>11}  (of them the program's)")
for name, members in sorted(groups.items(), key=lambda item: -len(item[1])):
    pages = median(len({pc >> 12 for pc in w}) for w in members)
    own_pages = median(len({pc >> 12 for pc in w if own[0][0] <= pc < own[-1][1]}) for w in members)
    print(f"  {name:<22} {len(members):>5} {median(len(w) for w in members):>16} "
          f"{median(len(set(w)) for w in members):>9} {pages:>11}  ({own_pages})")
for name in ("reads frames only", "writes a line"):
    members = groups.get(name)
    if not members:
        continue
    wakeup = median_wakeup(members)
    print(f"\nThe median wake-up that {name}: distinct blocks by function (blocks {counted} in brackets)")
    entered = collections.Counter(names[pc] for pc in wakeup)
    distinct = collections.Counter(names[pc] for pc in set(wakeup))
    for function_name, count in distinct.most_common(int(os.environ.get("BENCH_TRACE_FUNCTIONS", "25"))):
        print(f"  {count:4} ({entered[function_name]:3})  {demangled(function_name)[:110]}")


# What TCG might find dear in an instruction: a locked (atomic) one, floating point (helper
# calls), a string instruction (one block execution per repetition), a division.
KINDS = [
    ("instructions", lambda op, text: True),
    ("calls", lambda op, text: op.startswith("call")),
    ("locked", lambda op, text: text.startswith("lock")),
    ("floating point", lambda op, text: re.match(r"v?(add|sub|mul|div|sqrt|min|max|ucomi|comi|round)[sp][sd]$|v?cvt", op) is not None),
    ("string (rep)", lambda op, text: text.startswith("rep")),
    ("divisions", lambda op, text: re.match(r"i?div[bwlq]?$", op) is not None),
    ("system calls", lambda op, text: op == "syscall"),
]


def mix(wakeup):
    counts = collections.Counter()
    for pc in wakeup:
        for text in instructions.get(pc, []):
            words = text.split()
            op = words[1] if words and words[0] in ("lock", "rep", "repe", "repne", "repz", "repnz") and len(words) > 1 else (words[0] if words else "")
            for label, test in KINDS:
                if test(op, text):
                    counts[label] += 1
    return counts


if instructions:
    # All of the stream, whatever kind of wake-up ran it: what the rare long wake-ups cost
    # (libevdev catching up, say) shows here and not in the medians.
    played = int(os.environ.get("BENCH_TRACE_FRAMES", "1000"))
    total = sum(len(instructions.get(pc, [])) for pc in stream)
    print(f"\nGuest instructions in the whole stream: {total}, {total / played:.0f} per frame played ({played})")
    print("\nGuest instructions per wake-up (medians; QEMU's disassembly of each block, times its executions):")
    for name in ("reads frames only", "writes a line"):
        members = groups.get(name)
        if not members:
            continue
        mixes = [mix(w) for w in members]
        cells = ", ".join(f"{label} {median(m[label] for m in mixes)}" for label, _ in KINDS)
        print(f"  {name}: {cells}")
        wakeup = median_wakeup(members)
        by_function = collections.Counter()
        for pc in wakeup:
            by_function[names[pc]] += len(instructions.get(pc, []))
        print(f"    by function in the median one: " + "; ".join(
            f"{demangled(function_name)[:60]} {count}" for function_name, count in by_function.most_common(8)))
