package metrics

import (
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestHealth() (*Health, *fakeClock) {
	c := &fakeClock{t: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)}
	h := NewHealth(10*time.Second, time.Minute)
	h.Now = c.now
	return h, c
}

func TestReadiness(t *testing.T) {
	h, _ := newTestHealth()
	steps := []struct {
		do   func()
		want string // "" is ready, else a part of the reason
	}{
		{func() {}, "not been checked"},
		{func() { h.APIChecked(nil) }, "starting"},
		{func() { h.SetRole(RoleLeader) }, "not synced"},
		{func() { h.Synced() }, ""},
		{func() { h.APIChecked(errors.New("connection refused")) }, "does not answer: connection refused"},
		{func() { h.APIChecked(nil) }, ""},
		{func() { h.SetRole(RoleStandby) }, ""},
		// A new term starts unsynced: leading again needs the caches again.
		{func() { h.SetRole(RoleLeader) }, "not synced"},
		{func() { h.Synced() }, ""},
	}
	for i, s := range steps {
		s.do()
		err := h.Ready()
		switch {
		case s.want == "" && err != nil:
			t.Fatalf("step %d: not ready: %v", i, err)
		case s.want != "" && (err == nil || !strings.Contains(err.Error(), s.want)):
			t.Fatalf("step %d: Ready() = %v, want an error containing %q", i, err, s.want)
		}
	}
}

func TestLivenessFailsOnlyWhenWedged(t *testing.T) {
	h, c := newTestHealth()
	h.APIChecked(nil)
	h.SetRole(RoleLeader)
	c.t = c.t.Add(time.Hour)
	if err := h.Live(); err != nil {
		t.Fatalf("not yet synced, so nothing is due: %v", err)
	}
	h.Synced()
	c.t = c.t.Add(59 * time.Second)
	if err := h.Live(); err != nil {
		t.Fatalf("59s after the last beat: %v", err)
	}
	h.Beat(c.t)
	c.t = c.t.Add(61 * time.Second)
	err := h.Live()
	if err == nil || !strings.Contains(err.Error(), "wedged: the watchdog's workers have finished nothing for 1m1s") {
		t.Fatalf("61s without a beat: %v", err)
	}
	// An API outage does not make the process unhealthy, and a standby is never wedged.
	h.APIChecked(errors.New("down"))
	h.SetRole(RoleStandby)
	if err := h.Live(); err != nil {
		t.Fatalf("standby: %v", err)
	}
}

func TestProbeHandlers(t *testing.T) {
	h, _ := newTestHealth()
	for _, tc := range []struct {
		check func() error
		code  int
		body  string
	}{
		{h.Ready, 503, "the API server has not been checked yet\n"},
		{h.Live, 200, "ok\n"},
	} {
		rec := httptest.NewRecorder()
		probe(tc.check)(rec, httptest.NewRequest("GET", "/", nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != tc.code || string(body) != tc.body {
			t.Errorf("got %d %q, want %d %q", rec.Code, body, tc.code, tc.body)
		}
	}
}
