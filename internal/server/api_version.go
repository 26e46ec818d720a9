package server

import (
	"net/http"
	"runtime"

	"github.com/wavecd/wavecd/internal/buildinfo"
)

// versionMessage is Argo CD's VersionMessage, with the fields wavecd
// knows.
type versionMessage struct {
	Version   string `json:"Version"`
	GitCommit string `json:"GitCommit,omitempty"`
	GoVersion string `json:"GoVersion,omitempty"`
	Compiler  string `json:"Compiler,omitempty"`
	Platform  string `json:"Platform,omitempty"`
}

// version is GET /api/version: the server's version to anyone, and how
// it was built to a logged-in user, as Argo CD answers it.
func (a *API) version(w http.ResponseWriter, r *http.Request) {
	info := buildinfo.Get()
	out := versionMessage{Version: info.Version}
	if _, _, err := a.authenticate(r); err == nil {
		out.GitCommit, out.GoVersion, out.Compiler, out.Platform = info.Commit, info.GoVersion, runtime.Compiler, info.Platform
	}
	writeJSON(w, http.StatusOK, out)
}
