package syncwindow

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"sigs.k8s.io/yaml"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// decisionCase is one case of testdata/decisions.yaml.
type decisionCase struct {
	Name    string                `json:"name"`
	Windows []v1alpha1.SyncWindow `json:"windows"`
	Target  *struct {
		App       string `json:"app"`
		Namespace string `json:"namespace"`
		Server    string `json:"server"`
		Cluster   string `json:"cluster"`
	} `json:"target"`
	Manual bool      `json:"manual"`
	Now    time.Time `json:"now"`
	Want   struct {
		Allowed  bool      `json:"allowed"`
		Blocking []string  `json:"blocking"`
		Until    time.Time `json:"until"`
		Message  string    `json:"message"`
	} `json:"want"`
}

func TestEvaluate(t *testing.T) {
	raw, err := os.ReadFile("testdata/decisions.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []decisionCase
	if err := yaml.UnmarshalStrict(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			specs := make(v1alpha1.SyncWindows, len(tc.Windows))
			for i := range tc.Windows {
				specs[i] = &tc.Windows[i]
			}
			windows, err := ParseAll(specs)
			if err != nil {
				t.Fatal(err)
			}
			target := Target{App: "guestbook", Namespace: "default", Server: "https://kubernetes.default.svc", Cluster: "in-cluster"}
			if tc.Target != nil {
				target = Target{App: tc.Target.App, Namespace: tc.Target.Namespace, Server: tc.Target.Server, Cluster: tc.Target.Cluster}
			}
			d := Evaluate(windows, target, tc.Now, tc.Manual)
			var blocking []string
			for _, w := range d.Blocking {
				blocking = append(blocking, w.Label())
			}
			type result struct {
				Allowed  bool
				Blocking []string
				Until    time.Time
			}
			want := result{Allowed: tc.Want.Allowed, Blocking: tc.Want.Blocking, Until: tc.Want.Until}
			got := result{Allowed: d.Allowed, Blocking: blocking, Until: d.Until}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmpopts.EquateApproxTime(0)); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if tc.Want.Message != "" {
				if diff := cmp.Diff(tc.Want.Message, d.Message(tc.Manual)); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
			}
			if d.Allowed && d.Message(tc.Manual) != "" {
				t.Errorf("an allowed sync has the message %q", d.Message(tc.Manual))
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		window  v1alpha1.SyncWindow
		wantErr string
	}{
		"unknown kind":      {v1alpha1.SyncWindow{Kind: "maybe", Schedule: "* * * * *", Duration: "1h"}, "kind must be allow or deny"},
		"six cron fields":   {v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 * * * * *", Duration: "1h"}, "schedule"},
		"descriptor":        {v1alpha1.SyncWindow{Kind: "deny", Schedule: "@daily", Duration: "1h"}, "schedule"},
		"no duration":       {v1alpha1.SyncWindow{Kind: "deny", Schedule: "* * * * *"}, "duration"},
		"negative duration": {v1alpha1.SyncWindow{Kind: "deny", Schedule: "* * * * *", Duration: "-1h"}, "duration must be positive"},
		"unknown time zone": {v1alpha1.SyncWindow{Kind: "allow", Schedule: "* * * * *", Duration: "1h", TimeZone: "Mars/Olympus"}, "time zone"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(tt.window)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), "sync window "+label(tt.window)) {
				t.Errorf("error %q does not name the window", err)
			}
		})
	}
	t.Run("ParseAll keeps the good windows and joins the errors", func(t *testing.T) {
		ws, err := ParseAll(v1alpha1.SyncWindows{
			{Kind: "deny", Schedule: "0 1 * * *", Duration: "1h"},
			{Kind: "deny", Schedule: "bad", Duration: "1h"},
			nil,
			{Kind: "allow", Schedule: "0 2 * * *", Duration: "x"},
		})
		if len(ws) != 1 || err == nil || !strings.Contains(err.Error(), "deny:bad:1h") || !strings.Contains(err.Error(), "allow:0 2 * * *:x") {
			t.Errorf("ParseAll = %d windows, %v; want 1 window and both errors", len(ws), err)
		}
	})
}

func TestNextChange(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := map[string]struct {
		window     v1alpha1.SyncWindow
		now        string
		wantActive bool
		wantNext   string // "" for never
	}{
		"closed: the next opening":      {v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 10 * * *", Duration: "1h"}, "2026-01-05T09:00:00Z", false, "2026-01-05T10:00:00Z"},
		"open: its end":                 {v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 10 * * *", Duration: "1h"}, "2026-01-05T10:59:59Z", true, "2026-01-05T11:00:00Z"},
		"every minute, for 30 seconds":  {v1alpha1.SyncWindow{Kind: "deny", Schedule: "* * * * *", Duration: "30s"}, "2026-01-05T10:00:40Z", false, "2026-01-05T10:01:00Z"},
		"every minute, open for 30s":    {v1alpha1.SyncWindow{Kind: "deny", Schedule: "* * * * *", Duration: "30s"}, "2026-01-05T10:00:10Z", true, "2026-01-05T10:00:30Z"},
		"touching activations merge":    {v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 10,11 * * *", Duration: "1h"}, "2026-01-05T10:30:00Z", true, "2026-01-05T12:00:00Z"},
		"always open: never changes":    {v1alpha1.SyncWindow{Kind: "deny", Schedule: "* * * * *", Duration: "2m"}, "2026-01-05T10:30:00Z", true, ""},
		"a date that never comes: none": {v1alpha1.SyncWindow{Kind: "deny", Schedule: "0 0 30 2 *", Duration: "1h"}, "2026-01-05T10:30:00Z", false, ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			w, err := Parse(tt.window)
			if err != nil {
				t.Fatal(err)
			}
			now := at(tt.now)
			if got := w.Active(now); got != tt.wantActive {
				t.Errorf("Active = %v, want %v", got, tt.wantActive)
			}
			got := w.NextChange(now)
			var want time.Time
			if tt.wantNext != "" {
				want = at(tt.wantNext)
			}
			if !got.Equal(want) {
				t.Errorf("NextChange = %v, want %v", got, want)
			}
		})
	}
}
