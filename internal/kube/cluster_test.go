package kube

import "testing"

func TestNewerVersion(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"10", "9", true},
		{"9", "10", false},
		{"10", "10", false},
		{"3", "", true},
		{"", "3", false},
		{"x", "3", false},
		{"3", "x", false},
	} {
		if got := NewerVersion(tc.a, tc.b); got != tc.want {
			t.Errorf("NewerVersion(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
