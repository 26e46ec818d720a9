// Package buildinfo owns the version facts stamped into wavecd binaries at
// build time. It holds data only; printing belongs to the CLI.
package buildinfo

import "runtime"

// Set with -ldflags "-X github.com/wavecd/wavecd/internal/buildinfo.Version=...".
var (
	Version = "dev"
	Commit  = "unknown"
)

// Info describes the running binary.
type Info struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

// Get returns the facts about the running binary.
func Get() Info {
	return Info{
		Version:   Version,
		Commit:    Commit,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
	}
}
