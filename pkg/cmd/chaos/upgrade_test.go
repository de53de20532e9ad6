package chaos

import "testing"

// TestUpgradeBadFlags: every bad flag is refused with one line and exit 2 before the API is called.
func TestUpgradeBadFlags(t *testing.T) {
	u := []string{"rayservice/demo", "--image", "rayproject/ray:2.47.0"}
	assertBadFlags(t, full(NewUpgradeCmd), []badFlags{
		{[]string{"rayservice/demo"}, "say what to change: --image IMAGE or --patch JSON-MERGE-PATCH"},
		{append(u, "--patch", `{"spec":{}}`), "--image and --patch exclude each other"},
		{[]string{"rayservice/demo", "--patch", "not json"}, "--patch is not a JSON object"},
		{[]string{"demo-cluster", "--image", "x"}, "name a RayService as rayservice/NAME"},
		{[]string{"raycluster/demo", "--image", "x"}, "name a RayService as rayservice/NAME"},
		{append(u, "--rate", "0"), `--rate "0" is not positive`},
		{append(u, "--warmup", "0s"), "--warmup must be positive"},
		{append(u, "--timeout", "10s"), "--timeout 10s leaves no time after the patch"},
		{append(u, "--max-errors", "-1"), "--max-errors must be 0 or more"},
		{append(u, "--min-availability", "101"), "percentage from 0 to 100"},
		{append(u, "--header", "nocolon"), "--header number 1 is not K:V"},
		{append(u, "-o", "junit"), `unknown output format "junit"`},
		{append(u, "--gateway-service", "a/b/c"), `--gateway-service "a/b/c": give NAMESPACE/NAME or NAME of a Service`},
		{append(u, "--gateway-service", "/gw"), `--gateway-service "/gw": give NAMESPACE/NAME or NAME of a Service`},
		{append(u, "--port", "70000"), "--port must be from 1 to 65535, not 70000"},
	})
}
