package cluster

import (
	"net"
	"testing"
)

func TestPickPorts(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busyPort := busy.Addr().(*net.TCPAddr).Port
	free, err := freePort(map[int]bool{})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		prev      Ports
		wantReuse map[string]bool
	}{
		"fresh directory picks new ports": {prev: Ports{}, wantReuse: map[string]bool{}},
		"free previous port is reused":    {prev: Ports{APIServer: free}, wantReuse: map[string]bool{"apiserver": true}},
		"busy previous port is replaced":  {prev: Ports{APIServer: busyPort}, wantReuse: map[string]bool{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := pickPorts(tc.prev)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[int]bool{}
			for _, p := range got.All() {
				if p == 0 || seen[p] {
					t.Fatalf("ports %+v: zero or repeated", got)
				}
				seen[p] = true
			}
			if reused := got.APIServer == tc.prev.APIServer; reused != tc.wantReuse["apiserver"] {
				t.Fatalf("apiserver port %d (previous %d): reused = %v, want %v", got.APIServer, tc.prev.APIServer, reused, tc.wantReuse["apiserver"])
			}
		})
	}
}

func TestIsZombie(t *testing.T) {
	tests := map[string]struct {
		stat string
		want bool
	}{
		"running":           {"123 (kube-apiserver) S 1 2 3", false},
		"zombie":            {"123 (kwok) Z 1 2 3", true},
		"paren in the name": {"123 (a) b) Z 1", true},
		"truncated":         {"123 (x)", false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := isZombie([]byte(tc.stat)); got != tc.want {
				t.Fatalf("isZombie(%q) = %v, want %v", tc.stat, got, tc.want)
			}
		})
	}
}
