package pressure

import "text/template"

// The memory variant holds the bytes as anonymous memory of dd processes: each reads its share of
// /dev/zero in ONE read into one buffer (bs=share, count=1), which the kernel fills at memory
// speed, then blocks writing it into a FIFO whose only reader (a keeper, a sleep) never reads. The
// buffer stays resident, charged to this container's cgroup (and so to the pod's), until the
// script kills the dd; nothing is left on disk.
//
// Why not tail (the method before): busybox's tail grows its buffer as a FIFO feeds it, 70–115
// MB/s on a real node, so a 20s run held 1.36 of 2 GiB when its deadline came; and busybox 1.35's
// tail fails at 2 GiB ("out of memory").
//
// Why several dd of at most MaxHolderBytes each, all started at once: Linux caps one read() at
// 2 GiB minus a page (MAX_RW_COUNT), so a larger share would hold less than asked; and several
// fill in parallel on several cores. Each keeper outlasts the deadline by 10 s, so even a
// SIGKILLed script frees the memory soon after (a dd whose reader is gone dies of SIGPIPE).
// Cleanup kills keepers and holders with SIGKILL: a keeper is a forked shell until it execs sleep,
// with the script's TERM trap, and would outlive it.
//
// Why the script reads RssAnon: dd says nothing until it ends, and it never ends here. The fill is
// done when every holder has its share resident as anonymous memory (/proc/PID/status), and
// "allocated" is said only then, with how long after the script's start (the ramp, from
// /proc/uptime); the hold checks it again every second. A holder gone, or no longer resident, is
// one line and exit 1, never a hold of nothing.
var memoryScript = template.Must(template.New("memory").Parse(`# kubectl ray chaos memory-pressure: allocate, hold until the deadline, release, exit.
` + common + `fifo={{.Fifo}}
holder={{.Holder}}
read -r t0 _ < /proc/uptime
eaters=
keepers=
sizes=
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
# anon: the anonymous memory resident in process $1, in kB (RssAnon; VmRSS on kernels before 4.5).
anon() {
  rss=0
  anonkb=
  { while read -r key value _; do
      case $key in RssAnon:) anonkb=$value ;; VmRSS:) rss=$value ;; esac
    done < "/proc/$1/status"; } 2>/dev/null
  echo "${anonkb:-$rss}"
}
# resident: every holder has its share resident; a holder gone is the end of the run.
resident() {
  i=0
  set -- $sizes
  for p in $eaters; do
    i=$((i + 1))
    want=$(($1 / 1024))
    shift
    if ! alive "$p"; then
      wait "$p" 2>/dev/null
      st=$?
      if [ "$phase" = hold ]; then
        die 1 "memory is no longer held: memory holder $i of $n (dd, pid $p) exited with status $st; its share is gone"
      fi
      die 1 "allocation failed: memory holder $i of $n (dd, pid $p) exited with status $st; its share is not held, so nothing is"
    fi
    if [ "$(anon "$p")" -lt "$want" ]; then return 1; fi
  done
}
# held: what was said to be held still is.
held() {
  if ! resident; then die 1 "memory is no longer held: a holder's share is not resident (swapped out or reclaimed)"; fi
}
# since: seconds since the script started, from /proc/uptime (hundredths).
since() {
  read -r t1 _ < /proc/uptime
  cs=$(( ${t1%.*}${t1#*.} - ${t0%.*}${t0#*.} ))
  printf '%d.%02d' $((cs / 100)) $((cs % 100))
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
  starting=1
  sleep $((deadline + 10)) < "$f" & keepers="$keepers $!"
  dd if=/dev/zero bs="$size" count=1 2>/dev/null > "$f" & eaters="$eaters $!"
  started
  sizes="$sizes $size"
  left=$((left - size))
done
until resident; do
  sleep 0.05 & poll=$!
  wait "$poll"; poll=
done
phase=hold
log "allocated $bytes bytes, resident $(since)s after start; holding until ${deadline}s after start"
while alive "$watchdog"; do
  sleep 1 & poll=$!
  wait "$poll"; poll=
  held
done
exit 0
`))
