package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

// The demo builds only v1.1.1; make test builds every version; an operator-less sandbox still
// gets the ray.io CRDs.
func TestBuildsOnlyTheOperatorsAskedFor(t *testing.T) {
	for _, tc := range []struct {
		build      []string
		bins, crds []string
	}{
		{nil, Operators, Operators},
		{[]string{OperatorV111}, []string{OperatorV111}, []string{OperatorV111}},
		{[]string{OperatorV160, OperatorV160}, []string{OperatorV160}, []string{OperatorV160}},
		{[]string{OperatorNone}, nil, []string{defaultCRDVersion}},
		{[]string{OperatorNone, defaultCRDVersion}, []string{defaultCRDVersion}, []string{defaultCRDVersion}},
	} {
		bins, crds := Config{Build: tc.build}.builds()
		if !reflect.DeepEqual(bins, tc.bins) || !reflect.DeepEqual(crds, tc.crds) {
			t.Errorf("Build %v: binaries %v, CRDs %v; want %v, %v", tc.build, bins, crds, tc.bins, tc.crds)
		}
	}
}

func TestUnknownOperatorVersionIsOneClearError(t *testing.T) {
	cfg := Config{Build: []string{OperatorV111, "v1.8.0"}, Repo: t.TempDir(), Cache: t.TempDir()}
	err := cfg.defaults()
	if err == nil || !strings.Contains(err.Error(), `unknown operator version "v1.8.0"`) || !strings.Contains(err.Error(), OperatorV170) {
		t.Fatalf("got %v", err)
	}
}
