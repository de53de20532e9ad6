package main

import (
	"net"
	"testing"
)

// Pod addresses come from 10.250.0.0/16 (the range the sandbox routes to loopback), never a
// network or broadcast-looking last octet, and the same sandbox always gets the same one.
func TestAddress(t *testing.T) {
	_, cidr, _ := net.ParseCIDR("10.250.0.0/16")
	seen := map[string]bool{}
	for _, id := range []string{"a", "b", "1794fb4a5d2295a6e31608fa626bfeaedf1e7bba883e75f386c870bc49fe07ee", "", "x y"} {
		a := Address(id)
		ip := net.ParseIP(a).To4()
		if ip == nil || !cidr.Contains(ip) || ip[3] == 0 || ip[3] == 255 {
			t.Errorf("Address(%q) = %s", id, a)
		}
		if Address(id) != a {
			t.Errorf("Address(%q) is not stable", id)
		}
		seen[a] = true
	}
	if len(seen) < 4 {
		t.Errorf("addresses collide: %v", seen)
	}
}
