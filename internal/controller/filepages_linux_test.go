//go:build linux

package controller

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestReadOnlyFileMapping(t *testing.T) {
	tests := map[string]struct {
		line       string
		start, end uintptr
		ok         bool
	}{
		"the executable's code": {
			line:  "00400000-0285b000 r-xp 00000000 fd:01 1835027                            /usr/local/bin/wavecd",
			start: 0x400000, end: 0x285b000, ok: true},
		"its read-only data": {
			line:  "0285c000-0529b000 r--p 0245c000 fd:01 1835027                            /usr/local/bin/wavecd",
			start: 0x285c000, end: 0x529b000, ok: true},
		"its writable data":      {line: "05298000-055df000 rw-p 04e98000 fd:01 1835027                            /usr/local/bin/wavecd"},
		"the heap":               {line: "c000000000-c004000000 rw-p 00000000 00:00 0"},
		"the vdso":               {line: "7ffd3b1f6000-7ffd3b1f8000 r-xp 00000000 00:00 0                          [vdso]"},
		"a guard page":           {line: "7f0e5c000000-7f0e5c001000 ---p 00000000 00:00 0"},
		"a line cut short":       {line: "00400000-0285b000 r-xp"},
		"an address that is not": {line: "zz-0285b000 r-xp 00000000 fd:01 1835027 /bin/x"},
		"an empty range":         {line: "00400000-00400000 r-xp 00000000 fd:01 1835027 /bin/x"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			start, end, ok := readOnlyFileMapping(tc.line)
			if ok != tc.ok || start != tc.start || end != tc.end {
				t.Errorf("readOnlyFileMapping(%q) = %#x, %#x, %v; want %#x, %#x, %v", tc.line, start, end, ok, tc.start, tc.end, tc.ok)
			}
		})
	}
}

// TestReleaseFilePages: the test binary's resident file pages, which its
// start-up made resident as a controller's does, mostly go, and the
// process runs on (this test goes on to read its status).
func TestReleaseFilePages(t *testing.T) {
	before := residentFileKiB(t)
	if before < 8<<10 {
		t.Fatalf("the test binary has %d KiB of file pages resident; a test of their release needs more", before)
	}
	if err := releaseFilePages(); err != nil {
		t.Fatal(err)
	}
	if after := residentFileKiB(t); after > before/2 {
		t.Errorf("resident file pages went from %d to %d KiB, want at most half left", before, after)
	}
}

// residentFileKiB is RssFile of the process's status.
func residentFileKiB(t *testing.T) int {
	t.Helper()
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "RssFile:"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				t.Fatalf("RssFile of %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatal("no RssFile in /proc/self/status")
	return 0
}
