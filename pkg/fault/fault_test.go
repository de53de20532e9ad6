package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestKindOf(t *testing.T) {
	err := Errorf(Forbidden, "you cannot %s pods", "delete")
	if err.Error() != "you cannot delete pods" || KindOf(err) != Forbidden {
		t.Fatalf("err = %q kind %d", err, KindOf(err))
	}
	if KindOf(fmt.Errorf("wrapped: %w", err)) != Forbidden {
		t.Error("KindOf must see through wrapping")
	}
	if KindOf(errors.New("plain")) != 0 || KindOf(nil) != 0 {
		t.Error("a plain error has no kind")
	}
}

func TestTextShowsFieldsAsTheCommandNamesThem(t *testing.T) {
	cause := errors.New("connection refused")
	err := Errorf(Invalid, "pass %s or %s, not both (%w)", Field("size"), Field("percent"), cause)
	if got := err.Error(); got != "pass size or percent, not both (connection refused)" {
		t.Errorf("Error() = %q", got)
	}
	flag := func(f Field) string { return "--" + string(f) }
	if got := err.Text(flag); got != "pass --size or --percent, not both (connection refused)" {
		t.Errorf("Text(flag) = %q", got)
	}
	if !errors.Is(err, cause) {
		t.Error("the quoted cause must stay reachable with errors.Is")
	}
}

func TestRenderFindsTheErrorInTheChain(t *testing.T) {
	flag := func(f Field) string { return "--" + string(f) }
	err := fmt.Errorf("doctor: %w", Errorf(API, "pick another %s", Field("context")))
	if got := Render(err, flag); got != "doctor: pick another --context" {
		t.Errorf("Render = %q", got)
	}
	if got := Render(errors.New("plain"), flag); got != "plain" {
		t.Errorf("Render of a plain error = %q", got)
	}
}
