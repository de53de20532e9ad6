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
