package main

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"
)

// packetWatch sees every frame this machine sends, on every interface, from an AF_PACKET socket
// (root only): a frame sent on any interface but loopback has left the machine, and is kept to
// be named. Frames on loopback are only counted, to show the watch saw traffic at all. It cannot
// say which process sent a frame: while it runs, nothing else of the test may use the network
// (the sandbox's control plane and the real node are all on loopback).
type packetWatch struct {
	fd       int
	mu       sync.Mutex
	left     []string // "eth0: IPv4 192.0.2.1 (UDP)"
	loopback int
	stop     chan struct{}
	done     chan struct{}
}

// watchPackets starts the watch; stop it with stopAndReport.
func watchPackets(t *testing.T) *packetWatch {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_PACKET, syscall.SOCK_RAW, int(htons(syscall.ETH_P_ALL)))
	if err != nil {
		t.Fatalf("watching the machine's interfaces (an AF_PACKET socket, root only): %v", err)
	}
	tv := syscall.Timeval{Usec: 200_000} // so the loop sees stop
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		syscall.Close(fd)
		t.Fatal(err)
	}
	w := &packetWatch{fd: fd, stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	t.Cleanup(func() { w.close() })
	return w
}

func (w *packetWatch) loop() {
	defer close(w.done)
	buf := make([]byte, 128) // headers only; the rest of a frame is cut
	names := map[int]string{}
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		n, from, err := syscall.Recvfrom(w.fd, buf, 0)
		if err != nil {
			continue // the timeout, or EINTR
		}
		ll, ok := from.(*syscall.SockaddrLinklayer)
		if !ok || ll.Pkttype != syscall.PACKET_OUTGOING {
			continue
		}
		name, ok := names[ll.Ifindex]
		if !ok {
			if ifc, err := net.InterfaceByIndex(ll.Ifindex); err == nil {
				name, names[ll.Ifindex] = ifc.Name, ifc.Name
			}
		}
		w.mu.Lock()
		if ll.Hatype == syscall.ARPHRD_LOOPBACK {
			w.loopback++
		} else if len(w.left) < 50 {
			w.left = append(w.left, name+": "+describeFrame(ll.Hatype, buf[:min(n, len(buf))]))
		}
		w.mu.Unlock()
	}
}

// describeFrame names a frame's protocol and destination (IPv4 and IPv6 behind an Ethernet
// header, or bare IP on an interface without one).
func describeFrame(hatype uint16, b []byte) string {
	proto := uint16(0)
	switch {
	case hatype == syscall.ARPHRD_ETHER && len(b) >= 14:
		proto, b = binary.BigEndian.Uint16(b[12:14]), b[14:]
	case len(b) > 0 && b[0]>>4 == 4:
		proto = syscall.ETH_P_IP
	case len(b) > 0 && b[0]>>4 == 6:
		proto = syscall.ETH_P_IPV6
	}
	transport := func(p byte) string {
		switch p {
		case syscall.IPPROTO_TCP:
			return "TCP"
		case syscall.IPPROTO_UDP:
			return "UDP"
		case syscall.IPPROTO_ICMP, syscall.IPPROTO_ICMPV6:
			return "ICMP"
		}
		return fmt.Sprintf("protocol %d", p)
	}
	switch {
	case proto == syscall.ETH_P_IP && len(b) >= 20:
		return fmt.Sprintf("IPv4 to %s (%s)", net.IP(b[16:20]), transport(b[9]))
	case proto == syscall.ETH_P_IPV6 && len(b) >= 40:
		return fmt.Sprintf("IPv6 to %s (%s)", net.IP(b[24:40]), transport(b[6]))
	case proto == syscall.ETH_P_ARP:
		return "ARP"
	}
	return fmt.Sprintf("a frame of ethertype %#04x", proto)
}

func (w *packetWatch) close() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
		<-w.done
		syscall.Close(w.fd)
	}
}

// stopAndReport stops the watch: the frames that left the machine, and how many it saw on
// loopback.
func (w *packetWatch) stopAndReport() (left []string, loopback int) {
	w.close()
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.left...), w.loopback
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// The frames are described from their headers: an Ethernet IPv4 UDP frame, an IPv6 one, ARP,
// and bare IP.
func TestDescribeFrame(t *testing.T) {
	eth := func(proto uint16, payload []byte) []byte {
		b := make([]byte, 14, 14+len(payload))
		binary.BigEndian.PutUint16(b[12:], proto)
		return append(b, payload...)
	}
	v4 := make([]byte, 20)
	v4[0], v4[9] = 0x45, syscall.IPPROTO_UDP
	copy(v4[16:], net.ParseIP("192.0.2.1").To4())
	v6 := make([]byte, 40)
	v6[0], v6[6] = 0x60, syscall.IPPROTO_TCP
	copy(v6[24:], net.ParseIP("fd00::1"))
	for _, c := range []struct {
		hatype uint16
		frame  []byte
		want   string
	}{
		{syscall.ARPHRD_ETHER, eth(syscall.ETH_P_IP, v4), "IPv4 to 192.0.2.1 (UDP)"},
		{syscall.ARPHRD_ETHER, eth(syscall.ETH_P_IPV6, v6), "IPv6 to fd00::1 (TCP)"},
		{syscall.ARPHRD_ETHER, eth(syscall.ETH_P_ARP, nil), "ARP"},
		{0xfffe, v4, "IPv4 to 192.0.2.1 (UDP)"},
	} {
		if got := describeFrame(c.hatype, c.frame); got != c.want {
			t.Errorf("describeFrame: %q, want %q", got, c.want)
		}
	}
}

// The watch sees this machine's frames: a loopback connection's are counted as loopback, and
// none of it is taken for a frame that left.
func TestPacketWatchSeesLoopback(t *testing.T) {
	if syscall.Geteuid() != 0 {
		t.Skip("an AF_PACKET socket needs root")
	}
	w := watchPackets(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("hello"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	c.Read(buf)
	c.Close()
	time.Sleep(300 * time.Millisecond)
	_, loopback := w.stopAndReport()
	if loopback < 3 { // at least the handshake
		t.Errorf("the watch saw %d frames on loopback, want the connection's", loopback)
	}
}
