package pressure

import "text/template"

// The memory variant holds the bytes as anonymous memory of tail processes, each reading
// /dev/zero through a FIFO of its own: tail keeps its input until it sees the last line, and
// /dev/zero has no newline, so each tail holds every byte it reads, charged to this container's
// cgroup (and so to the pod's). Killing the tails frees it at once; nothing is left on disk.
//
// Why several tails of at most MaxHolderBytes each: busybox 1.35's tail fails at 2 GiB ("out of
// memory", right after its last read), so one tail for the whole amount held nothing while the
// writer had succeeded. Each FIFO has a keeper, a sleep that holds its write end open so its tail
// never sees EOF, and it outlasts the deadline by 10 s, so even a SIGKILLed script frees the
// memory soon after. The keeper must have the FIFO open before the writer can finish, and being
// started first is not enough: on a loaded machine a tail and a writer that started later met
// first, the writer finished, and the tail saw EOF and exited 0 (a unit test run beside a sandbox
// build saw it). So the script opens the FIFO read-write on fd 8 (which never blocks), the keeper
// opens it for writing (which then does not block either) and writes one byte, and the script
// reads that byte before it lets go of fd 8 and starts the tail: the keeper holds the FIFO by then.
// The keeper holds only a write end, so a tail gone mid-way still fails the writer (EPIPE).
// Cleanup kills keepers and tails with SIGKILL: a keeper is a forked shell until it execs sleep,
// with the script's TERM trap, and would outlive it.
//
// Why a settle and a check: a tail that could not keep what it read dies just after its last
// read, after the writer has finished; the script waits a second, then checks that every tail is
// still alive before it says "holding", and checks again every second of the hold. A tail gone
// is one line and exit 1, never a hold of nothing.
var memoryScript = template.Must(template.New("memory").Parse(`# kubectl ray chaos memory-pressure: allocate, hold until the deadline, release, exit.
` + common + `fifo={{.Fifo}}
holder={{.Holder}}
eaters=
keepers=
n=0
poll=
cleanup() {
  trap - EXIT INT TERM USR1
  stop_worker
  if [ -n "$poll" ]; then kill "$poll" 2>/dev/null; fi
  if [ -n "$eaters" ]; then kill -9 $eaters $keepers 2>/dev/null; wait $eaters 2>/dev/null; log "released memory"; fi
  kill "$watchdog" 2>/dev/null
  i=0
  while [ "$i" -lt "$n" ]; do rm -f "$fifo.$i"; i=$((i + 1)); done
}
trap cleanup EXIT
# alive: the process exists and has not exited (kill -0 also succeeds on a zombie not yet reaped).
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  st=
  { read -r _ _ st _ < "/proc/$1/stat"; } 2>/dev/null
  [ "$st" != Z ]
}
# held: every tail still holds its share; else the log says which one is gone.
held() {
  i=0
  for p in $eaters; do
    i=$((i + 1))
    if ! alive "$p"; then
      wait "$p" 2>/dev/null
      die 1 "allocation failed: memory holder $i of $n (tail, pid $p) exited with status $?; its share is not held, so nothing is"
    fi
  done
}
if [ -n "$percent" ]; then
  avail=
  while read -r key value _; do
    if [ "$key" = MemAvailable: ]; then avail=$value; fi
  done < {{.Meminfo}}
  if [ -z "$avail" ]; then die 2 "no MemAvailable in "{{.Meminfo}}; fi
  bytes=$((avail * 1024 * percent / 100))
fi
if [ "$bytes" -lt 1 ]; then die 2 "nothing to allocate: $bytes bytes"; fi
holders=$(((bytes + holder - 1) / holder))
phase=fill
log "allocating $bytes bytes ($holders holders of at most $holder bytes each)"
left=$bytes
while [ "$left" -gt 0 ]; do
  size=$holder
  if [ "$left" -lt "$size" ]; then size=$left; fi
  f="$fifo.$n"
  rm -f "$f"
  n=$((n + 1))
  mkfifo "$f" || die 1 "allocation failed: cannot make the FIFO $f"
  exec 8<> "$f"
  ( printf k; exec sleep $((deadline + 10)) ) > "$f" 8>&- & keepers="$keepers $!"
  head -c 1 <&8 > /dev/null
  exec 8>&-
  tail < "$f" > /dev/null & eaters="$eaters $!"
  head -c "$size" /dev/zero > "$f" & worker=$!
  if ! wait "$worker"; then worker=; die 1 "allocation failed: writing $size bytes to memory holder $n of $holders failed"; fi
  worker=
  left=$((left - size))
done
phase=settle
sleep 1 & poll=$!
wait "$poll"; poll=
held
phase=hold
log "allocated; holding until ${deadline}s after start"
while alive "$watchdog"; do
  sleep 1 & poll=$!
  wait "$poll"; poll=
  held
done
exit 0
`))
