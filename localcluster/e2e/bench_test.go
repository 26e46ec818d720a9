package e2e

import (
	"testing"
)

// BenchmarkWarmStart measures `start --detach` to usable on a directory
// that already holds a cluster's data (etcd, PKI, nodes), then stops it.
func BenchmarkWarmStart(b *testing.B) {
	dir := b.TempDir()
	cli(b, "start", "--dir", dir, "--nodes", "2", "--detach")
	cli(b, "stop", "--dir", dir)
	b.ResetTimer()
	for b.Loop() {
		cli(b, "start", "--dir", dir, "--nodes", "2", "--detach")
		b.StopTimer()
		cli(b, "stop", "--dir", dir)
		b.StartTimer()
	}
}

// BenchmarkColdStart measures a start into an empty directory.
func BenchmarkColdStart(b *testing.B) {
	for b.Loop() {
		dir := b.TempDir()
		cli(b, "start", "--dir", dir, "--nodes", "2", "--detach")
		b.StopTimer()
		cli(b, "stop", "--dir", dir)
		b.StartTimer()
	}
}
