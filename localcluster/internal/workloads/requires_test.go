package workloads

import (
	"strings"
	"testing"
	"time"
)

func TestParseRequires(t *testing.T) {
	tests := map[string]struct {
		value   string
		want    string // the requirements joined by ","
		wantErr string
	}{
		"one service":               {value: "redis.ns:6379", want: "redis.ns:6379"},
		"several with spaces":       {value: "redis.ns:6379, db.data:5432", want: "redis.ns:6379,db.data:5432"},
		"svc suffix":                {value: "redis.ns.svc:6379", want: "redis.ns:6379"},
		"cluster.local suffix":      {value: "redis.ns.svc.cluster.local:6379", want: "redis.ns:6379"},
		"empty value":               {value: " ", wantErr: "annotation localcluster.wavecd.io/requires: no entries"},
		"trailing comma":            {value: "redis.ns:6379,", wantErr: "annotation localcluster.wavecd.io/requires: entry 2 is empty"},
		"no port":                   {value: "redis.ns", wantErr: `entry "redis.ns": no port`},
		"port not a number":         {value: "redis.ns:http", wantErr: `entry "redis.ns:http": port "http" is not a number`},
		"port out of range":         {value: "redis.ns:70000", wantErr: `entry "redis.ns:70000": port "70000"`},
		"port zero":                 {value: "redis.ns:0", wantErr: `entry "redis.ns:0": port "0"`},
		"no namespace":              {value: "redis:6379", wantErr: `entry "redis:6379": host "redis": want <service>.<namespace>`},
		"too many dots":             {value: "a.b.c:1", wantErr: `entry "a.b.c:1": host "a.b.c"`},
		"service not a DNS label":   {value: "Redis.ns:6379", wantErr: `entry "Redis.ns:6379": service "Redis"`},
		"namespace not a DNS label": {value: "redis.n_s:6379", wantErr: `entry "redis.n_s:6379": namespace "n_s"`},
		"bad entry after good one":  {value: "redis.ns:6379,oops", wantErr: `annotation localcluster.wavecd.io/requires: entry "oops"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseRequires(tc.value)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseRequires(%q) error = %v, want one containing %q", tc.value, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var s []string
			for _, r := range got {
				s = append(s, r.String())
			}
			if strings.Join(s, ",") != tc.want {
				t.Fatalf("ParseRequires(%q) = %v, want %s", tc.value, s, tc.want)
			}
		})
	}
}

func TestBackoffSchedule(t *testing.T) {
	tests := map[string]struct {
		annotation string
		want       []time.Duration // delays after crash 1, 2, 3, ...
		wantErr    string
	}{
		"kubelet default": {annotation: "", want: []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second,
			80 * time.Second, 160 * time.Second, 300 * time.Second, 300 * time.Second}},
		"one second base caps at 30s": {annotation: "1s", want: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second,
			8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}},
		"not a duration": {annotation: "soon", wantErr: `annotation localcluster.wavecd.io/backoff: "soon" is not a positive duration`},
		"zero":           {annotation: "0s", wantErr: `"0s" is not a positive duration`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b, err := ParseBackoff(tc.annotation)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				if got := b.Delay(int32(i + 1)); got != want {
					t.Errorf("delay after crash %d = %s, want %s", i+1, got, want)
				}
			}
			if got := b.Delay(1000); got != b.Max {
				t.Errorf("delay after 1000 crashes = %s, want the cap %s", got, b.Max)
			}
		})
	}
}
