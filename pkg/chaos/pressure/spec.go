// Package pressure builds what `kubectl ray chaos disk-pressure` and `memory-pressure` add to a
// pod: one ephemeral container whose own shell script fills disk or memory, holds, cleans up and
// exits. Everything here is pure: the command resolves the target pod, this package decides the
// exact container.
package pressure

import (
	"time"
)

// Kind is which resource the container puts under pressure.
type Kind string

const (
	Disk   Kind = "disk-pressure"
	Memory Kind = "memory-pressure"
)

// Fill is where disk-pressure writes.
type Fill string

const (
	// FillNode writes in the ephemeral container's own writable layer: node disk (nodefs/imagefs)
	// fills, the Ray container's ephemeral-storage limit does not. This is seed 000's fallocate.
	FillNode Fill = "node"
	// FillContainer writes through /proc/1/root into the target container's filesystem, which
	// counts against the target's ephemeral-storage limit.
	FillContainer Fill = "container"
)

// NamePrefix starts the name of every ephemeral container this tool adds; it is how ours are told
// apart from other debug containers.
const NamePrefix = "kubectl-ray-"

// DefaultImage is public, about 4 MB, and its busybox (1.36.1, built from defconfig) has every
// applet the scripts use: sh, fallocate, dd, df, head, mkfifo, sleep, kill.
const DefaultImage = "busybox:1.36.1"

// Caps bound what runs without --force.
const (
	MaxDiskBytes   int64 = 100 << 30 // 100Gi
	MaxMemoryBytes int64 = 64 << 30  // 64Gi
	// MaxRuntimePercent bounds --percent of free space or available memory measured at run time:
	// filling the last few percent of a node's disk or memory harms every pod on it, not just Ray.
	MaxRuntimePercent = 95
	MaxDuration       = time.Hour
)

// MaxHolderBytes is the most one dd of the memory script holds; more memory takes more of them.
// Linux caps one read() at 2 GiB minus a page (MAX_RW_COUNT), and dd reads its share in one read.
// A power of two under that cap.
const MaxHolderBytes int64 = 1 << 30

// Spec is the resolved plan for one ephemeral container.
type Spec struct {
	Kind Kind
	Fill Fill // disk only
	// Bytes is the amount to fill; 0 when Percent is measured at run time by the script.
	Bytes int64
	// Percent is of the free space (disk) or MemAvailable (memory) the script measures at run
	// time; 0 when Bytes is fixed.
	Percent int
	// Basis says in words where the amount came from, for the confirmation and the docs.
	Basis           string
	Duration        time.Duration
	Force           bool
	Image           string
	TargetContainer string
	Name            string
	Paths           Paths
	// HolderBytes is the most one dd of the memory script holds; 0 means MaxHolderBytes (tests
	// set less, to run several holders in little memory).
	HolderBytes int64
}
