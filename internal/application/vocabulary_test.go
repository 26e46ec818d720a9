package application

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	const maxNote = 1024
	long := strings.Repeat("é", maxNote) // two bytes each
	for _, tc := range []struct {
		name, in string
		wantLen  int
	}{
		{"short", "synced", len("synced")},
		{"at the limit", strings.Repeat("a", maxNote), maxNote},
		{"over, cut on a rune", long, maxNote - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.in, maxNote)
			if len(got) != tc.wantLen || !utf8.ValidString(got) {
				t.Errorf("Truncate: %d bytes (valid UTF-8: %v), want %d", len(got), utf8.ValidString(got), tc.wantLen)
			}
			if len(tc.in) > maxNote && !strings.HasSuffix(got, "...") {
				t.Errorf("a cut note does not end with ...: %q", got[len(got)-8:])
			}
		})
	}
}
