package server

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/internal/testenv"
)

// TestMaxWebhookBytes reads argocd-cm's webhook.maxPayloadSizeMB as Argo CD
// does: megabytes, 50 when the ConfigMap or the key is absent.
func TestMaxWebhookBytes(t *testing.T) {
	env := testenv.Get(t)
	c := kubeClient(t, env)
	tests := map[string]struct {
		data    map[string]string
		want    int64
		wantErr string
	}{
		"no argocd-cm":   {want: 50 << 20},
		"no key":         {data: map[string]string{"timeout.reconciliation": "60s"}, want: 50 << 20},
		"set":            {data: map[string]string{MaxPayloadSizeKey: " 2 "}, want: 2 << 20},
		"not a number":   {data: map[string]string{MaxPayloadSizeKey: "2MB"}, wantErr: `argocd-cm key webhook.maxPayloadSizeMB: "2MB" is not a positive number of megabytes`},
		"not a positive": {data: map[string]string{MaxPayloadSizeKey: "0"}, wantErr: `"0" is not a positive number of megabytes`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns := env.Namespace(t)
			if tc.data != nil {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-cm"}, Data: tc.data}
				if err := c.Create(t.Context(), cm); err != nil {
					t.Fatal(err)
				}
			}
			got, err := MaxWebhookBytes(t.Context(), c, ns)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("MaxWebhookBytes = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}
