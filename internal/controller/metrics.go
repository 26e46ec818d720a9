package controller

import (
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/server"
)

// metrics forwards to Options.Metrics; every method does nothing when it
// is nil.
type metrics struct{ m *server.Metrics }

func (m metrics) reconciled(namespace, name string, err error, took time.Duration) {
	if m.m == nil {
		return
	}
	result := server.ResultSuccess
	if err != nil {
		result = server.ResultError
	}
	m.m.ObserveReconcile(namespace, name, result, took)
}

func (m metrics) synced(app *v1alpha1.Application, phase v1alpha1.OperationPhase) {
	if m.m != nil {
		m.m.ObserveSync(app, phase)
	}
}

func (m metrics) appInfo(app *v1alpha1.Application) {
	if m.m != nil {
		m.m.SetAppInfo(app)
	}
}

func (m metrics) deleted(namespace, name string) {
	if m.m != nil {
		m.m.DeleteApp(namespace, name)
	}
}

func (m metrics) gitFetched(repo string, took time.Duration, err error) {
	if m.m != nil {
		m.m.ObserveGitFetch(repo, took, err)
	}
}
