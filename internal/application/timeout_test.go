package application

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

func TestSyncTimeout(t *testing.T) {
	tests := map[string]struct {
		value   string
		want    time.Duration
		wantErr string
	}{
		"none":           {"", 0, ""},
		"minutes":        {"10m", 10 * time.Minute, ""},
		"spaces trimmed": {" 90s ", 90 * time.Second, ""},
		"no unit":        {"600", 0, `application web: annotation wavecd.io/sync-timeout: "600" is not a positive duration such as 10m`},
		"negative":       {"-5m", 0, `application web: annotation wavecd.io/sync-timeout: "-5m" is not a positive duration such as 10m`},
		"zero":           {"0s", 0, `application web: annotation wavecd.io/sync-timeout: "0s" is not a positive duration such as 10m`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			app := &v1alpha1.Application{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
			if tc.value != "" {
				app.Annotations = map[string]string{AnnotationSyncTimeout: tc.value}
			}
			got, err := SyncTimeout(app)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if got != tc.want || gotErr != tc.wantErr {
				t.Errorf("SyncTimeout = %v, %q; want %v, %q", got, gotErr, tc.want, tc.wantErr)
			}
		})
	}
}
