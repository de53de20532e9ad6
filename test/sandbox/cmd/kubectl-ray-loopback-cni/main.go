// Command kubectl-ray-loopback-cni is the CNI plugin of the sandbox's real node. It gives each pod
// a network namespace with only loopback: it brings `lo` up and adds one address to it, from
// RealNodePodCIDR (10.250.0.0/16), which containerd records as the pod IP. No bridge, veth or
// route is made, so no pod can reach anything outside itself, and traffic reaches pods only
// through the API server (port-forward, exec, logs), as the sandbox requires. On the machine
// itself the sandbox routes that range to loopback (a "local" route), so a dial of a pod IP from
// here (a kubelet HTTP probe, say) stays on this machine. A loopback pod IP would be safer still,
// but EndpointSlices refuse loopback addresses, and a Service would then never list the pod.
//
// containerd 1.6 refuses a sandbox whose CNI result names no IP for the interface it asked for
// (CNI_IFNAME, "eth0"): "failed to find network info for sandbox". The result therefore reports
// the address under that name, though it lives on lo.
//
// containerd 1.6 also runs a plugin named "loopback" for every sandbox, before the configured
// network; this binary is installed under that name too and then only brings lo up.
//
// It speaks CNI 0.4.0 (ADD, DEL, CHECK, VERSION) and changes the namespace with ip(8) through
// nsenter(1), which every Debian base has.
package main

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const cniVersion = "0.4.0"

func main() {
	if err := run(); err != nil {
		b, _ := json.Marshal(map[string]any{"cniVersion": cniVersion, "code": 100, "msg": err.Error()})
		fmt.Println(string(b))
		os.Exit(1)
	}
}

func run() error {
	// The network configuration comes on stdin; nothing in it is needed but it must be read.
	_, _ = io.ReadAll(os.Stdin)
	switch cmd := os.Getenv("CNI_COMMAND"); cmd {
	case "VERSION":
		return print(map[string]any{"cniVersion": cniVersion, "supportedVersions": []string{"0.3.0", "0.3.1", "0.4.0"}})
	case "ADD":
		netns, id, ifname := os.Getenv("CNI_NETNS"), os.Getenv("CNI_CONTAINERID"), os.Getenv("CNI_IFNAME")
		if netns == "" || id == "" {
			return fmt.Errorf("CNI_NETNS and CNI_CONTAINERID are required")
		}
		if err := inNetns(netns, "ip", "link", "set", "lo", "up"); err != nil {
			return err
		}
		if filepath.Base(os.Args[0]) == "loopback" {
			return print(map[string]any{
				"cniVersion": cniVersion,
				"interfaces": []map[string]any{{"name": "lo", "sandbox": netns}},
				"ips":        []map[string]any{{"version": "4", "address": "127.0.0.1/8", "interface": 0}},
				"dns":        map[string]any{},
			})
		}
		addr := Address(id)
		// The address may be there already when containerd retries an ADD.
		if err := inNetns(netns, "ip", "addr", "replace", addr+"/32", "dev", "lo"); err != nil {
			return err
		}
		if ifname == "" {
			ifname = "eth0"
		}
		return print(map[string]any{
			"cniVersion": cniVersion,
			"interfaces": []map[string]any{{"name": ifname, "sandbox": netns}},
			"ips":        []map[string]any{{"version": "4", "address": addr + "/32", "interface": 0}},
			"dns":        map[string]any{},
		})
	case "DEL", "CHECK":
		// The namespace, and its addresses with it, goes away with the sandbox.
		return nil
	default:
		return fmt.Errorf("unknown CNI_COMMAND %q", cmd)
	}
}

// Address is the pod address of a sandbox: 10.250.x.y with x.y from a hash of its ID, never .0
// or .255, so two pods of one node rarely share one (and sharing would harm nothing: no one
// routes to it).
func Address(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	n := h.Sum32()
	return fmt.Sprintf("10.250.%d.%d", n>>8%256, 1+n%254)
}

func inNetns(netns string, args ...string) error {
	out, err := exec.Command("nsenter", append([]string{"--net=" + netns}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s in %s: %v: %s", strings.Join(args, " "), netns, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func print(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Println(string(b))
	return err
}
