package pressure

import (
	"bytes"
	"strconv"
	"strings"
	"text/template"
)

// Paths are where the script writes and what it reads. Production uses DefaultPaths; tests point
// them at a temporary directory so the very script that ships runs on the test machine.
type Paths struct {
	// OwnDir is where --fill node writes: a directory in the ephemeral container's own writable
	// layer, which lives on the node's disk (nodefs/imagefs).
	OwnDir string
	// TargetRoot is the target container's root as seen through /proc: with targetContainerName
	// the ephemeral container shares the target's PID namespace, whose PID 1 is the target's
	// entrypoint.
	TargetRoot string
	// TargetDir is the directory inside the target's root that --fill container writes to.
	TargetDir string
	// Meminfo is read for --percent of memory when the target has no memory limit.
	Meminfo string
	// WorkDir holds the memory variant's FIFO (in the ephemeral container's own layer).
	WorkDir string
}

// DefaultPaths are the paths inside the ephemeral container.
var DefaultPaths = Paths{
	OwnDir:     "/tmp",
	TargetRoot: "/proc/1/root",
	TargetDir:  "/tmp",
	Meminfo:    "/proc/meminfo",
	WorkDir:    "/tmp",
}

// Script is the POSIX sh program the ephemeral container runs. It is self-bounded: a watchdog
// inside it ends the run Duration after start whatever the plugin does, and a trap on EXIT (reached
// from TERM, INT and the deadline) removes what it made. It needs only busybox applets.
func Script(s Spec) string {
	var b bytes.Buffer
	t := diskScript
	if s.Kind == Memory {
		t = memoryScript
	}
	if err := t.Execute(&b, scriptVars(s)); err != nil {
		// The templates are constants exercised by the tests; failing here is a programming error.
		panic(err)
	}
	return b.String()
}

type vars struct {
	Name, Dir, File, Fifo, Meminfo, Percent, Bytes, Holder, Force, Deadline, CheckPID string
}

func scriptVars(s Spec) vars {
	v := vars{
		Name:     s.Name,
		Deadline: strconv.FormatInt(int64(s.Duration.Seconds()), 10),
		Force:    "0",
		Meminfo:  quote(s.Paths.Meminfo),
		CheckPID: "0",
		Holder:   strconv.FormatInt(MaxHolderBytes, 10),
	}
	if s.HolderBytes > 0 {
		v.Holder = strconv.FormatInt(s.HolderBytes, 10)
	}
	if s.Force {
		v.Force = "1"
	}
	if s.Bytes > 0 {
		v.Bytes = strconv.FormatInt(s.Bytes, 10)
	}
	if s.Percent > 0 {
		v.Percent = strconv.Itoa(s.Percent)
	}
	dir := s.Paths.OwnDir
	if s.Kind == Disk && s.Fill == FillContainer {
		dir = strings.TrimRight(s.Paths.TargetRoot, "/") + s.Paths.TargetDir
		v.CheckPID = "1"
	}
	v.Dir = quote(dir)
	v.File = quote(strings.TrimRight(dir, "/") + "/" + s.Name + ".fill")
	v.Fifo = quote(strings.TrimRight(s.Paths.WorkDir, "/") + "/" + s.Name + ".fifo")
	return v
}

// quote makes s one single-quoted shell word.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// common is shared by both variants: logging, the watchdog and the signal plumbing.
//
// Why a watchdog and USR1: a trapped signal interrupts `wait` but not a foreground command, so
// every long step runs in the background and the shell waits for it. The watchdog is a subshell
// that sleeps until the deadline and then sends USR1 to the main shell; USR1 during the hold is
// the normal end (exit 0), during the fill it means the fill did not finish in time: the step still
// running is stopped (exit 124), so nothing keeps writing or allocating past the deadline.
//
// held (each variant's own) dies unless what was filled is still there; the hold and a deadline
// during the memory variant's settle check it before saying "held".
//
// die is every failing end: it cleans up first and says why last, so that the last line of the
// log (which the kubelet copies into the container's terminated message, the policy being
// FallbackToLogsOnError) is the reason, and --watch-eviction can show it.
const common = `set -u
log() { echo "{{.Name}}: $*"; }
deadline={{.Deadline}}
percent={{.Percent}}
bytes={{.Bytes}}
force={{.Force}}
phase=start
worker=
watchdog=
stop_worker() {
  if [ -n "$worker" ]; then kill "$worker" 2>/dev/null; wait "$worker" 2>/dev/null; worker=; fi
}
die() { code=$1; shift; cleanup; log "$*"; exit "$code"; }
on_deadline() {
  case $phase in
  hold|settle) held; log "held for ${deadline}s"; exit 0 ;;
  fill) stop_worker; die 124 "deadline of ${deadline}s reached during fill; stopped the fill" ;;
  esac
  die 124 "deadline of ${deadline}s reached during $phase"
}
# A signal between starting a step in the background and recording its PID would leave the step
# unknown to cleanup: a holder that keeps its memory, or a writer its file, after the run ends (in
# a shared PID namespace nothing else kills it). So a signal that comes while a step starts is
# deferred until its PID is recorded (started).
starting=
deferred=
on_signal() { if [ -n "$starting" ]; then deferred=$1; else "$1"; fi; }
started() { starting=; if [ -n "$deferred" ]; then d=$deferred; deferred=; "$d"; fi; }
on_term() { log "terminated"; exit 143; }
on_int() { log "interrupted"; exit 130; }
trap 'on_signal on_deadline' USR1
trap 'on_signal on_term' TERM
trap 'on_signal on_int' INT
( s=; trap 'kill $s 2>/dev/null; exit 0' TERM
  sleep "$deadline" & s=$!
  wait "$s" && kill -USR1 $$ ) &
watchdog=$!
`

var diskScript = template.Must(template.New("disk").Parse(`# kubectl ray chaos disk-pressure: fill, hold until the deadline, remove the file, exit.
` + common + `dir={{.Dir}}
file={{.File}}
cleanup() {
  trap - EXIT INT TERM USR1
  stop_worker
  kill "$watchdog" 2>/dev/null
  if [ -e "$file" ]; then rm -f "$file" && log "removed $file"; fi
}
trap cleanup EXIT
held() { :; }
# With --fill container, PID 1 must be the target's process; if it is this shell, the runtime did
# not share the target's PID namespace and the write would land in our own layer instead.
if [ {{.CheckPID}} = 1 ] && [ "$$" = 1 ]; then die 2 "the target container's processes are not visible (no shared PID namespace); cannot write into it"; fi
if [ ! -d "$dir" ]; then die 2 "$dir is not a directory I can reach"; fi
free=$(df -Pk "$dir" | { read -r _; read -r _ _ _ avail _; echo "$avail"; })
free=$((free * 1024))
if [ -n "$percent" ]; then bytes=$((free * percent / 100)); fi
if [ "$bytes" -gt "$free" ] && [ "$force" != 1 ]; then
  die 2 "refusing to write $bytes bytes: only $free bytes are free in $dir (pass --force to fill it anyway)"
fi
phase=fill
log "writing $bytes bytes to $file ($free bytes free)"
starting=1
fallocate -l "$bytes" "$file" 2>/dev/null & worker=$!
started
if ! wait "$worker"; then
  # fallocate is missing or the filesystem does not support it: write zeros, in whole MiB.
  worker=
  rm -f "$file"
  log "fallocate failed; writing with dd"
  starting=1
  dd if=/dev/zero of="$file" bs=1048576 count=$(((bytes + 1048575) / 1048576)) 2>/dev/null & worker=$!
  started
  if ! wait "$worker"; then worker=; die 1 "dd failed: the disk is not filled"; fi
fi
worker=
phase=hold
log "filled; holding until ${deadline}s after start"
wait "$watchdog"
exit 0
`))
