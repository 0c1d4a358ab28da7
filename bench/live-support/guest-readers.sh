# Sourced by the guest halves of bench/wakeup-trace and bench/syscall-trace: what they share
# to set up readers on a uinput pen in the VM. Set `me` (the bench's name, for messages)
# before sourcing; it makes `pids` (killed on exit), `local_dir` (in the guest's own /tmp)
# and `node` (the pen's event node, from WORK/pen.events, WORK being $1).

pids=()
trap 'for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done' EXIT

# needs TOOL...: exits 69 naming the packages when one is missing.
needs() {
    for tool in "$@"; do
        command -v "$tool" > /dev/null || { echo "$me: $tool is needed (apt-get install evemu-tools util-linux)" >&2; exit 69; }
    done
}

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
    local seconds=$1; shift
    for _ in $(seq $((seconds * 10))); do "$@" && return 0; sleep 0.1; done
    echo "$me: waited $seconds s for: $*" >&2
    return 1
}

# wait_until_idle PID LIMIT STEP: until PID has used no CPU for STEP seconds (its last frames
# read), at most LIMIT checks; fails when it was still busy.
wait_until_idle() {
    local pid=$1 limit=$2 step=$3 before= now
    for _ in $(seq "$limit"); do
        now=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
        [[ $now == "$before" ]] && return 0
        before=$now
        sleep "$step"
    done
    return 1
}

# start_daemon_with_watcher [PREFIX...]: forcescaled on the pen, its socket and state in the
# guest's own /tmp (9p cannot hold a socket), with one `forcescale watch --json` client;
# PREFIX (such as `setarch -R`) runs the daemon only. Sets `daemon` and `watcher`.
start_daemon_with_watcher() {
    "$@" "$work/forcescaled" --device "$node" --socket "$local_dir/sock" --state-dir "$local_dir/state" \
        --interval-ms 10 --no-rumble 2> "$local_dir/daemon.err" &
    daemon=$!
    pids+=("$daemon")
    wait_for 120 "$work/forcescale" status --socket "$local_dir/sock" > /dev/null 2>&1
    "$work/forcescale" watch --json --socket "$local_dir/sock" > /dev/null 2>&1 &
    watcher=$!
    pids+=("$watcher")
    # Connected once the daemon counts two clients: the watcher and the asking one.
    watching() { "$work/forcescale" status --json --socket "$local_dir/sock" 2> /dev/null | grep -q '"clients":[2-9]'; }
    wait_for 60 watching
}

work=$1
needs evemu-device evemu-play
local_dir=$(mktemp -d)
evemu-device "$work/pen.events" > "$local_dir/device.txt" & pids+=($!)
wait_for 60 grep -q '/dev/input/event' "$local_dir/device.txt"
node=$(grep -o '/dev/input/event[0-9]*' "$local_dir/device.txt" | head -n 1)
