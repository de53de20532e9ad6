package rayapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"
)

// What ReadKeeping kept, replayed, is the view Read made: healthy, the GCS down, reads that
// failed while others answered, and a dashboard that never answered.
func TestReplayIsTheViewThatWasRead(t *testing.T) {
	closed := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	closed.Close()
	bases := map[string]string{
		"healthy": dashboard(t, nil),
		"gcs down": dashboard(t, map[string]func(http.ResponseWriter){
			"/api/gcs_healthz": func(w http.ResponseWriter) { http.Error(w, "GCS is not alive", http.StatusServiceUnavailable) },
		}),
		"partial": dashboard(t, map[string]func(http.ResponseWriter){
			"/api/v0/nodes": func(w http.ResponseWriter) { http.Error(w, "GCS unavailable", http.StatusInternalServerError) },
			"/api/jobs/":    func(w http.ResponseWriter) { _, _ = w.Write([]byte("<html>")) },
		}),
		"unconnected": closed.URL,
	}
	for name, base := range bases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			var kept View
			ReadKeeping(ctx, http.DefaultClient, base, "", &kept)
			if len(kept.Answers) == 0 {
				t.Fatal("nothing kept")
			}
			var plain View
			Read(ctx, http.DefaultClient, base, "", &plain)
			var again View
			Replay(&again, kept.Answers)
			kept.Answers = nil
			if !reflect.DeepEqual(again, kept) || !reflect.DeepEqual(plain, kept) {
				t.Fatalf("replayed %+v\nkept     %+v\nread     %+v", again, kept, plain)
			}
		})
	}
}

// A read whose answer was not kept (a bundle cut short) is listed as failed, never claimed.
func TestReplayWithoutAnAnswer(t *testing.T) {
	var v View
	Replay(&v, []Answer{{Path: PathGCSHealth, Code: 200, Body: []byte("success")}})
	if !v.GCSAlive || v.NodesRead || v.AppsRead || v.JobsRead || len(v.Failed) != 5 {
		t.Fatalf("view %+v", v)
	}
	var none View
	Replay(&none, nil)
	if none.Unreachable == nil || none.GCSAlive {
		t.Fatalf("no answers: %+v", none)
	}
}
