package network

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// maxReview bounds a review's body (the API server sends at most 3 MiB
// objects, twice for an update).
const maxReview = 8 << 20

// review is the part of an AdmissionReview or ConversionReview the
// endpoint reads.
type review struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Request    *struct {
		UID               string                       `json:"uid"`
		DesiredAPIVersion string                       `json:"desiredAPIVersion,omitempty"`
		Objects           []*unstructured.Unstructured `json:"objects,omitempty"`
	} `json:"request"`
}

// Endpoint answers what a webhook or an aggregated API server is asked,
// the same way for all of them: admission allowed unchanged, conversion by
// apiVersion, an empty discovery document for a group version.
func Endpoint() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost:
			answerReview(w, r)
		case r.Method != http.MethodGet:
			status(w, http.StatusMethodNotAllowed, "MethodNotAllowed", r.Method+" is not served")
		case r.URL.Path == "/healthz" || r.URL.Path == "/livez" || r.URL.Path == "/readyz":
			_, _ = io.WriteString(w, "ok")
		default:
			answerDiscovery(w, r)
		}
	})
}

func answerReview(w http.ResponseWriter, r *http.Request) {
	var rv review
	if err := json.NewDecoder(io.LimitReader(r.Body, maxReview)).Decode(&rv); err != nil || rv.Request == nil {
		status(w, http.StatusBadRequest, "BadRequest", "want an AdmissionReview or a ConversionReview")
		return
	}
	var out map[string]any
	switch rv.Kind {
	case "AdmissionReview":
		out = map[string]any{"apiVersion": rv.APIVersion, "kind": rv.Kind,
			"response": map[string]any{"uid": rv.Request.UID, "allowed": true}}
	case "ConversionReview":
		converted := make([]any, 0, len(rv.Request.Objects))
		for _, o := range rv.Request.Objects {
			o.SetAPIVersion(rv.Request.DesiredAPIVersion)
			converted = append(converted, o.Object)
		}
		out = map[string]any{"apiVersion": rv.APIVersion, "kind": rv.Kind, "response": map[string]any{
			"uid": rv.Request.UID, "convertedObjects": converted, "result": map[string]any{"status": metav1.StatusSuccess}}}
	default:
		status(w, http.StatusBadRequest, "BadRequest", fmt.Sprintf("%s is neither an AdmissionReview nor a ConversionReview", rv.Kind))
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// answerDiscovery serves /apis/GROUP/VERSION (and /api/VERSION) with no
// resources; everything else is not found, which the API server's
// discovery and OpenAPI aggregation take as "nothing more".
func answerDiscovery(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var gv string
	switch {
	case len(parts) == 3 && parts[0] == "apis":
		gv = parts[1] + "/" + parts[2]
	case len(parts) == 2 && parts[0] == "api":
		gv = parts[1]
	default:
		status(w, http.StatusNotFound, "NotFound", r.URL.Path+" is not served")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": []any{}})
}

func status(w http.ResponseWriter, code int, reason, msg string) {
	writeJSON(w, code, map[string]any{"kind": "Status", "apiVersion": "v1", "status": metav1.StatusFailure,
		"reason": reason, "message": msg, "code": code})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
