package server

import (
	"context"
	"errors"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/wavecd/wavecd/internal/appclient"
	"github.com/wavecd/wavecd/internal/application"
)

// grpcCodes maps HTTP statuses to the gRPC codes Argo CD's API puts in
// the `code` field of its errors.
var grpcCodes = map[int]int{
	http.StatusBadRequest:          3,  // InvalidArgument
	http.StatusUnauthorized:        16, // Unauthenticated
	http.StatusForbidden:           7,  // PermissionDenied
	http.StatusNotFound:            5,  // NotFound
	http.StatusConflict:            9,  // FailedPrecondition
	http.StatusTooManyRequests:     8,  // ResourceExhausted
	http.StatusInternalServerError: 13, // Internal
	http.StatusServiceUnavailable:  14, // Unavailable
}

// apiError is the JSON body of every API error, as Argo CD's.
type apiError struct {
	Error   string `json:"error"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, err error) {
	code, ok := grpcCodes[status]
	if !ok {
		code = 2 // Unknown
	}
	writeJSON(w, status, apiError{Error: err.Error(), Code: code, Message: err.Error()})
}

// statusOf picks the HTTP status for an error of an app action: a missing
// app is 404, an operation in progress 409, an API server refusal keeps
// its status, anything else the caller asked for is 400.
func statusOf(err error) int {
	var nf *application.NotFoundError
	var busy *appclient.OperationInProgressError
	var st apierrors.APIStatus
	switch {
	case errors.As(err, &nf):
		return http.StatusNotFound
	case errors.As(err, &busy):
		return http.StatusConflict
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	case errors.As(err, &st):
		if c := int(st.Status().Code); c >= 400 {
			return c
		}
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// readConfigMap returns a ConfigMap's data; a missing one is empty.
func readConfigMap(ctx context.Context, c client.Reader, namespace, name string) (map[string]string, error) {
	var cm corev1.ConfigMap
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &cm)
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return cm.Data, nil
}
