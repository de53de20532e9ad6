package bundle

import (
	"fmt"
	"io"
	"sync"

	"github.com/kubectl-ray/kubectl-ray/pkg/cmdutil"
)

// progress is one line on stderr, rewritten as reads finish, when stderr is a terminal; nothing
// when it is piped (a CI log keeps no carriage returns).
type progress struct {
	w    io.Writer
	on   bool
	mu   sync.Mutex
	line bool
}

func newProgress(w io.Writer) *progress { return &progress{w: w, on: cmdutil.IsTerminal(w)} }

func (p *progress) say(s string) {
	if !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "\r\033[Kbundle: %s", s)
	p.line = true
}

func (p *progress) count(done, total int) { p.say(fmt.Sprintf("%d/%d reads", done, total)) }

func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.line {
		fmt.Fprintln(p.w)
		p.line = false
	}
}
