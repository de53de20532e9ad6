// Package testio holds what tests share for reading what the tool writes: output written by
// other goroutines, and the archives it makes.
package testio

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that goroutines (a process's output copier, a watchdog's loggers) may
// write while a test reads it: a bare bytes.Buffer there is a data race.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
