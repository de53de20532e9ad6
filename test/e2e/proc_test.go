package e2e

import (
	"net"
	"strconv"
	"time"

	"github.com/kubectl-ray/kubectl-ray/test/sandbox"
)

func processAlive(pid int) bool { return sandbox.Alive(pid) }

func portListening(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
