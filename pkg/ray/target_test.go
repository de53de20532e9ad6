package ray

import (
	"errors"
	"testing"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct {
		arg     string
		allowed []Kind
		want    Target
	}{
		{"my-cluster", nil, Target{Name: "my-cluster"}},
		{"my-cluster", []Kind{KindPod}, Target{Name: "my-cluster"}},
		{"raycluster/a", nil, Target{KindRayCluster, "a"}},
		{"rayclusters/a", nil, Target{KindRayCluster, "a"}},
		{"raycluster.ray.io/a", nil, Target{KindRayCluster, "a"}},
		{"rayclusters.ray.io/a", nil, Target{KindRayCluster, "a"}},
		{"RayCluster/a", nil, Target{KindRayCluster, "a"}},
		{"rayservice/s", nil, Target{KindRayService, "s"}},
		{"rayservices/s", nil, Target{KindRayService, "s"}},
		{"rayservice.ray.io/s", nil, Target{KindRayService, "s"}},
		{"rayservices.ray.io/s", []Kind{KindRayService}, Target{KindRayService, "s"}},
		{"rayjob/j", nil, Target{KindRayJob, "j"}},
		{"rayjobs.ray.io/j", nil, Target{KindRayJob, "j"}},
		{"rayjob.ray.io/j", nil, Target{KindRayJob, "j"}},
		{"pod/p", nil, Target{KindPod, "p"}},
		{"pods/p", []Kind{KindPod}, Target{KindPod, "p"}},
		{"po/p", []Kind{KindPod}, Target{KindPod, "p"}},
	} {
		got, err := ParseTarget(tc.arg, tc.allowed...)
		if err != nil || got != tc.want {
			t.Errorf("ParseTarget(%q, %v) = %+v, %v; want %+v", tc.arg, tc.allowed, got, err, tc.want)
		}
	}
}

func TestParseTargetRefuses(t *testing.T) {
	for _, tc := range []struct {
		arg     string
		allowed []Kind
		msg     string
	}{
		{"deployment/x", nil, `cannot target "deployment/x": name NAME, raycluster/NAME, rayservice/NAME, rayjob/NAME, raycronjob/NAME or pod/NAME`},
		{"pod/x", []Kind{KindRayCluster}, `cannot target "pod/x": name NAME or raycluster/NAME`},
		{"rayjob/x", []Kind{KindRayCluster, KindRayService}, `cannot target "rayjob/x": name NAME, raycluster/NAME or rayservice/NAME`},
		{"raycluster/", nil, ""},
		{"/x", nil, ""},
		{"", nil, ""},
		{"raycluster/a/b", nil, ""},
		{"rayclusters.v1.ray.io/a", nil, ""},
	} {
		_, err := ParseTarget(tc.arg, tc.allowed...)
		var te *TargetError
		if !errors.As(err, &te) || te.Arg != tc.arg {
			t.Errorf("ParseTarget(%q) err = %v, want a *TargetError", tc.arg, err)
			continue
		}
		if tc.msg != "" && err.Error() != tc.msg {
			t.Errorf("ParseTarget(%q) err = %q, want %q", tc.arg, err, tc.msg)
		}
	}
}

func TestTargetString(t *testing.T) {
	for _, tc := range []struct {
		t    Target
		want string
	}{
		{Target{Name: "a"}, "a"},
		{Target{KindRayCluster, "a"}, "raycluster/a"},
		{Target{KindRayService, "s"}, "rayservice/s"},
		{Target{KindRayJob, "j"}, "rayjob/j"},
		{Target{KindPod, "p"}, "pod/p"},
	} {
		if got := tc.t.String(); got != tc.want {
			t.Errorf("%+v.String() = %q, want %q", tc.t, got, tc.want)
		}
		// What String prints, ParseTarget reads back.
		if back, err := ParseTarget(tc.want); err != nil || back != tc.t {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tc.want, back, err, tc.t)
		}
	}
}
