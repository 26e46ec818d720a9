package cli

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/internal/testenv"
)

func TestAdminInitialPassword(t *testing.T) {
	ns, c := appCluster(t)
	env := testenv.Get(t)
	run := func() (string, error) {
		out, _, err := runCLI(t, "admin", "initial-password", "--kubeconfig", env.Kubeconfig, "-n", ns)
		return out, err
	}
	_, err := run()
	if err == nil || !strings.Contains(err.Error(), "argocd-initial-admin-secret not found") {
		t.Fatalf("without the secret: error = %v, want it to name the missing secret", err)
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "argocd-initial-admin-secret"},
		Data:       map[string][]byte{"password": []byte("Gen3ratedPassw0rd")},
	}
	if err := c.Create(t.Context(), sec); err != nil {
		t.Fatal(err)
	}
	out, err := run()
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "admin-initial-password.txt", out)
	help, _, err := runCLI(t, "admin", "initial-password", "--help")
	if err != nil {
		t.Fatal(err)
	}
	assertGolden(t, "admin-initial-password-help.txt", help)
}
