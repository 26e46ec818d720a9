package application

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// The sync state of a root app of thousands of children (one task per
// child) takes megabytes as JSON, above what etcd stores in one object.
// EncodeState writes a state above stateGzipMin bytes gzipped, as
// {"gzip": "<base64>"}; StateJSON reads either form. Repetitive task
// lists compress about twentyfold.
const (
	stateGzipMin = 16 << 10
	// stateExpandMax bounds what a gzipped state may expand to, so that
	// a crafted status cannot exhaust the controller's memory.
	stateExpandMax = 64 << 20
)

// gzipState is the compressed form of a sync state.
type gzipState struct {
	Gzip []byte `json:"gzip"`
}

// EncodeState marshals state v into status.operationState.wavecdState,
// compressed when large.
func EncodeState(v any) (*apiextensionsv1.JSON, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode sync state: %w", err)
	}
	if len(b) < stateGzipMin {
		return &apiextensionsv1.JSON{Raw: b}, nil
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("compress sync state: %w", err)
	}
	if _, err := zw.Write(b); err != nil {
		return nil, fmt.Errorf("compress sync state: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("compress sync state: %w", err)
	}
	out, err := json.Marshal(gzipState{Gzip: buf.Bytes()})
	if err != nil {
		return nil, fmt.Errorf("encode sync state: %w", err)
	}
	return &apiextensionsv1.JSON{Raw: out}, nil
}

// StateJSON is the JSON of a sync state as EncodeState wrote it: raw
// itself, or what its gzip field expands to.
func StateJSON(raw *apiextensionsv1.JSON) ([]byte, error) {
	if raw == nil {
		return nil, nil
	}
	compressed, ok := gzipped(raw.Raw)
	if !ok {
		return raw.Raw, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return nil, fmt.Errorf("expand sync state: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(zr, stateExpandMax+1))
	if err != nil {
		return nil, fmt.Errorf("expand sync state: %w", err)
	}
	if len(b) > stateExpandMax {
		return nil, errors.New("expand sync state: larger than 64 MiB")
	}
	return b, nil
}

// gzipped returns the compressed bytes of a state EncodeState wrote
// gzipped; false for a state written as it is.
func gzipped(raw []byte) ([]byte, bool) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`{"gzip"`)) {
		return nil, false
	}
	var z gzipState
	if err := json.Unmarshal(raw, &z); err != nil || z.Gzip == nil {
		return nil, false
	}
	return z.Gzip, true
}
