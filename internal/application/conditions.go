package application

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/wavecd/wavecd/api/v1alpha1"
)

// SetCondition records a condition of type typ in st, replacing the one
// of that type. Its lastTransitionTime moves to now only when the
// message changes, so a condition found again as it was does not flap.
func SetCondition(st *v1alpha1.ApplicationStatus, typ, message string, now time.Time) {
	t := metav1.NewTime(now)
	for i := range st.Conditions {
		if st.Conditions[i].Type == typ {
			if st.Conditions[i].Message != message {
				st.Conditions[i].Message, st.Conditions[i].LastTransitionTime = message, &t
			}
			return
		}
	}
	st.Conditions = append(st.Conditions, v1alpha1.ApplicationCondition{Type: typ, Message: message, LastTransitionTime: &t})
}

// ClearCondition removes the conditions of type typ from st.
func ClearCondition(st *v1alpha1.ApplicationStatus, typ string) {
	out := st.Conditions[:0]
	for _, c := range st.Conditions {
		if c.Type != typ {
			out = append(out, c)
		}
	}
	st.Conditions = out
}
