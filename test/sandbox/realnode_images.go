package sandbox

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// The real node's images. No registry is reached: each is built here from files of this machine
// (Debian's busybox-static, bash and wget, and the project's own stand-ins) and imported into the
// node's containerd. Names under localhost/ can never make a pull leave the machine; the Ray image
// also carries the name KubeRay's sample uses, so the sample runs as written, and its registry
// (docker.io) is pointed at a dead loopback address like every other (realnode_config.go).
const (
	// BusyboxImage is for the pressure experiments' ephemeral containers (chaos --image).
	BusyboxImage = "localhost/kubectl-ray/busybox:sandbox"
	// PauseImage is the pod sandbox's image: busybox's sleep plays the pause process.
	PauseImage = "localhost/kubectl-ray/pause:sandbox"
	// RayImage is the stand-in Ray image: bash, wget and busybox's applets, and test/play/cmd/ray
	// as `ray`.
	RayImage = "localhost/kubectl-ray/ray:sandbox"
	// RaySampleImage is the image of KubeRay v1.1.1's ray-cluster.complete.yaml, given to the
	// stand-in too.
	RaySampleImage = "docker.io/rayproject/ray:2.9.0"
)

// realImages writes the three image tarballs (docker save format, what `ctr images import`
// reads) into dir. rayBin is the built Ray stand-in.
func realImages(dir, rayBin string) error {
	bb, err := busyboxEntries()
	if err != nil {
		return err
	}
	pause, err := image(bb, []string{"/bin/sleep", "2147483647"}, nil)
	if err != nil {
		return err
	}
	busybox, err := image(bb, []string{"/bin/sh"}, nil)
	if err != nil {
		return err
	}
	host, err := hostBinaryEntries("/bin/bash", "/usr/bin/wget")
	if err != nil {
		return err
	}
	ray, err := os.ReadFile(rayBin)
	if err != nil {
		return err
	}
	extra := append(host,
		tarEntry{path: "usr/local/bin/ray", mode: 0o755, data: ray},
		// Files before DNS: `localhost` (the probes' host) is in the kubelet's /etc/hosts.
		tarEntry{path: "etc/nsswitch.conf", mode: 0o644, data: []byte("hosts: files dns\n")},
		tarEntry{path: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/bin/bash\nray:x:1000:100:ray:/home/ray:/bin/bash\n")},
		tarEntry{path: "home/ray", mode: 0o755, dir: true},
	)
	rayImg, err := image(append(bb, extra...), nil, []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/ray"})
	if err != nil {
		return err
	}
	for file, refs := range map[string]struct {
		img  v1.Image
		tags []string
	}{
		"pause.tar":   {pause, []string{PauseImage}},
		"busybox.tar": {busybox, []string{BusyboxImage}},
		"ray.tar":     {rayImg, []string{RayImage, RaySampleImage}},
	} {
		m := map[name.Reference]v1.Image{}
		for _, t := range refs.tags {
			tag, err := name.NewTag(t)
			if err != nil {
				return err
			}
			m[tag] = refs.img
		}
		tmp := filepath.Join(dir, file+".tmp")
		if err := tarball.MultiRefWriteToFile(tmp, m); err != nil {
			return fmt.Errorf("writing image %s: %w", file, err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
			return err
		}
	}
	return nil
}

type tarEntry struct {
	path string
	mode int64
	data []byte
	link string // a symlink's target
	dir  bool
}

// busyboxEntries are /bin/busybox (static) and a link for each of its applets in /bin, plus /tmp.
func busyboxEntries() ([]tarEntry, error) {
	bin, err := exec.LookPath("busybox")
	if err != nil {
		return nil, fmt.Errorf("busybox is not installed (apt-get install busybox-static)")
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	if bytes.Contains(data[:min(len(data), 4096)], []byte("ld-linux")) {
		return nil, fmt.Errorf("%s is dynamically linked: install busybox-static", bin)
	}
	out, err := exec.Command(bin, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("busybox --list: %v", err)
	}
	entries := []tarEntry{
		{path: "bin", dir: true, mode: 0o755},
		{path: "tmp", dir: true, mode: 0o1777},
		{path: "bin/busybox", mode: 0o755, data: data},
	}
	for _, a := range strings.Fields(string(out)) {
		if a == "busybox" || strings.Contains(a, "/") {
			continue
		}
		entries = append(entries, tarEntry{path: "bin/" + a, link: "busybox"})
	}
	return entries, nil
}

// hostBinaryEntries copies dynamically linked binaries of this machine with every library ldd
// names, at the same paths: a real bash and a real wget (GNU wget takes the --tries flag KubeRay
// v1.6.0's probes pass; busybox's does not).
func hostBinaryEntries(bins ...string) ([]tarEntry, error) {
	files := map[string]bool{}
	for _, b := range bins {
		files[b] = true
		out, err := exec.Command("ldd", b).Output()
		if err != nil {
			return nil, fmt.Errorf("ldd %s: %v", b, err)
		}
		for _, f := range strings.Fields(string(out)) {
			if strings.HasPrefix(f, "/") {
				files[f] = true
			}
		}
	}
	var paths []string
	for f := range files {
		paths = append(paths, f)
	}
	sort.Strings(paths)
	var entries []tarEntry
	dirs := map[string]bool{}
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, err
		}
		data, err := os.ReadFile(real)
		if err != nil {
			return nil, err
		}
		for d := filepath.Dir(p); d != "/" && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		// bash and wget shadow busybox's applets of the same name.
		entries = append(entries, tarEntry{path: strings.TrimPrefix(p, "/"), mode: 0o755, data: data})
	}
	var ds []string
	for d := range dirs {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	out := make([]tarEntry, 0, len(ds)+len(entries))
	for _, d := range ds {
		if d == "/bin" {
			continue // busyboxEntries has it
		}
		out = append(out, tarEntry{path: strings.TrimPrefix(d, "/"), dir: true, mode: 0o755})
	}
	return append(out, entries...), nil
}

// image is one layer of entries (a later entry of a path replaces an earlier one) with an
// entrypoint and environment.
func image(entries []tarEntry, entrypoint, env []string) (v1.Image, error) {
	last := map[string]int{}
	for i, e := range entries {
		last[e.path] = i
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i, e := range entries {
		if last[e.path] != i {
			continue
		}
		h := &tar.Header{Name: e.path, Mode: e.mode & 0o7777, Uname: "root", Gname: "root"}
		switch {
		case e.dir:
			h.Typeflag, h.Name = tar.TypeDir, e.path+"/"
		case e.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(e.data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(buf.Bytes())), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint = entrypoint
	cf.Config.Env = env
	if len(env) == 0 {
		cf.Config.Env = []string{"PATH=/bin"}
	}
	return mutate.ConfigFile(img, cf)
}
