package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/wavecd/wavecd/internal/logctx"
	"github.com/wavecd/wavecd/internal/source"
)

// The sidecar protocol's paths.
const (
	pathConfig   = "/v1/config"
	pathMatch    = "/v1/match"
	pathGenerate = "/v1/generate"
)

// maxRequestJSON bounds the JSON part of a request.
const maxRequestJSON = 1 << 20

// configResponse describes a sidecar's plugin.
type configResponse struct {
	Name      string `json:"name"`
	Discovery bool   `json:"discovery"`
}

// matchResponse answers /v1/match.
type matchResponse struct {
	Supported bool `json:"supported"`
	Discovery bool `json:"discovery"`
}

// generateResponse answers /v1/generate.
type generateResponse struct {
	Manifests string `json:"manifests"`
}

// errorResponse is any failure.
type errorResponse struct {
	Error string `json:"error"`
}

// Handler serves svc over the sidecar protocol.
func Handler(svc *Service) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+pathConfig, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, configResponse{Name: svc.Config.Name(), Discovery: svc.Config.HasDiscovery()})
	})
	mux.HandleFunc("POST "+pathMatch, func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, func(req *Request, repo io.Reader) (any, error) {
			supported, discovery, err := svc.Match(r.Context(), req, repo)
			return matchResponse{Supported: supported, Discovery: discovery}, err
		})
	})
	mux.HandleFunc("POST "+pathGenerate, func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, func(req *Request, repo io.Reader) (any, error) {
			out, err := svc.Generate(r.Context(), req, repo)
			return generateResponse{Manifests: out}, err
		})
	})
	return mux
}

// serve reads a request's two parts (the JSON Request, then the
// repository) and answers with what run returns.
func serve(w http.ResponseWriter, r *http.Request, run func(*Request, io.Reader) (any, error)) {
	mr, err := r.MultipartReader()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
		return
	}
	req, repo, err := readParts(mr)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errorResponse{Error: err.Error()})
		return
	}
	resp, err := run(req, repo)
	if err != nil {
		logctx.From(r.Context()).Warn("plugin request failed", "path", r.URL.Path, "app path", req.AppPath, "err", err)
		writeJSON(w, http.StatusUnprocessableEntity, errorResponse{Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func readParts(mr *multipart.Reader) (*Request, io.Reader, error) {
	part, err := mr.NextPart()
	if err != nil || part.FormName() != "request" {
		return nil, nil, errors.New("want a multipart body: request, then repository")
	}
	req := &Request{}
	if err := json.NewDecoder(io.LimitReader(part, maxRequestJSON)).Decode(req); err != nil {
		return nil, nil, fmt.Errorf("request: %w", err)
	}
	repo, err := mr.NextPart()
	if err != nil || repo.FormName() != "repository" {
		return nil, nil, errors.New("want a multipart body: request, then repository")
	}
	return req, repo, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// remote is a plugin served by a sidecar on a Unix socket.
type remote struct {
	plugin string
	socket string
	client *http.Client
}

func newRemote(name, socket string) *remote {
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", socket)
	}
	return &remote{plugin: name, socket: socket, client: &http.Client{Transport: &http.Transport{DialContext: dial, IdleConnTimeout: 30 * time.Second}}}
}

func (r *remote) name() string { return r.plugin }

func (r *remote) discovery(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://plugin"+pathConfig, nil)
	if err != nil {
		return false, err
	}
	var cfg configResponse
	if err := r.do(req, &cfg); err != nil {
		return false, err
	}
	return cfg.Discovery, nil
}

func (r *remote) match(ctx context.Context, req *Request, tree *source.Tree) (bool, bool, error) {
	var resp matchResponse
	err := r.post(ctx, pathMatch, req, tree, &resp)
	return resp.Supported, resp.Discovery, err
}

func (r *remote) generate(ctx context.Context, req *Request, tree *source.Tree) (string, error) {
	var resp generateResponse
	err := r.post(ctx, pathGenerate, req, tree, &resp)
	return resp.Manifests, err
}

// post sends req and the repository as a multipart stream.
func (r *remote) post(ctx context.Context, path string, req *Request, tree *source.Tree, out any) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeParts(ctx, mw, req, tree)) }()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://plugin"+path, pr)
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", mw.FormDataContentType())
	return r.do(hreq, out)
}

func writeParts(ctx context.Context, mw *multipart.Writer, req *Request, tree *source.Tree) error {
	part, err := mw.CreateFormField("request")
	if err != nil {
		return err
	}
	if err := json.NewEncoder(part).Encode(req); err != nil {
		return err
	}
	repo, err := mw.CreateFormFile("repository", "repository.tar.gz")
	if err != nil {
		return err
	}
	if err := source.WriteTar(ctx, tree, repo, source.TarOptions{OmitEscapingSymlinks: true}); err != nil {
		return err
	}
	return mw.Close()
}

func (r *remote) do(req *http.Request, out any) error {
	resp, err := r.client.Do(req)
	if err != nil {
		return fmt.Errorf("plugin %s: sidecar at %s: %w", r.plugin, r.socket, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, Limits{}.withDefaults().MaxOutput*2))
	if err != nil {
		return fmt.Errorf("plugin %s: sidecar at %s: %w", r.plugin, r.socket, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e errorResponse
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return errors.New(e.Error)
		}
		return fmt.Errorf("plugin %s: sidecar at %s: %s: %s", r.plugin, r.socket, resp.Status, strings.TrimSpace(string(bytes.TrimSpace(body))))
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("plugin %s: sidecar at %s: bad answer: %w", r.plugin, r.socket, err)
	}
	return nil
}
