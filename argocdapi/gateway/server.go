package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	gogoproto "github.com/gogo/protobuf/proto"
	"github.com/improbable-eng/grpc-web/go/grpcweb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Options configure a Gateway.
type Options struct {
	// Upstream is wavecd's REST API, e.g. http://127.0.0.1:8080.
	Upstream string
	// Client reaches it (default: a client without a timeout, for
	// streams).
	Client *http.Client
}

// Gateway answers Argo CD's gRPC calls through wavecd's REST API.
type Gateway struct {
	opts    Options
	methods map[string]*Method
}

// New returns a Gateway.
func New(o Options) (*Gateway, error) {
	methods, err := LoadMethods()
	if err != nil {
		return nil, err
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	o.Upstream = strings.TrimRight(o.Upstream, "/")
	return &Gateway{opts: o, methods: methods}, nil
}

// GRPCServer is a gRPC server whose every call the gateway answers.
func (g *Gateway) GRPCServer() *grpc.Server {
	return grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(g.handle))
}

// frame is a message's bytes as they travel.
type frame struct{ data []byte }

// rawCodec passes messages through as bytes: the gateway decodes them
// with Argo CD's generated code.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, fmt.Errorf("gateway codec: unexpected %T", v)
	}
	return f.data, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return fmt.Errorf("gateway codec: unexpected %T", v)
	}
	f.data = append([]byte(nil), data...)
	return nil
}

var _ encoding.Codec = rawCodec{}

func (g *Gateway) handle(_ any, stream grpc.ServerStream) error {
	name, _ := grpc.MethodFromServerStream(stream)
	m := g.methods[name]
	if m == nil {
		return status.Errorf(codes.Unimplemented, "wavecd does not serve %s", name)
	}
	var in frame
	if err := stream.RecvMsg(&in); err != nil {
		return err
	}
	msg := newMessage(m.In)
	if err := gogoproto.Unmarshal(in.data, msg); err != nil {
		return status.Errorf(codes.InvalidArgument, "decode %s: %v", m.In, err)
	}
	req, err := m.toREST(msg)
	if err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	ctx := stream.Context()
	resp, err := g.do(ctx, req, token(ctx))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if m.Stream {
		return g.relay(stream, m, resp.Body)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return status.Errorf(codes.Unavailable, "read the answer of %s %s: %v", req.verb, req.path, err)
	}
	return send(stream, m, body)
}

// send answers with one message decoded from REST JSON.
func send(stream grpc.ServerStream, m *Method, body []byte) error {
	out := newMessage(m.Out)
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, out); err != nil {
			return status.Errorf(codes.Internal, "decode the answer as %s: %v", m.Out, err)
		}
	}
	data, err := gogoproto.Marshal(out)
	if err != nil {
		return status.Errorf(codes.Internal, "encode %s: %v", m.Out, err)
	}
	return stream.SendMsg(&frame{data: data})
}

// relay answers a server stream: each event of the REST event stream
// ({"result": ...} in a data line) is one message.
func (g *Gateway) relay(stream grpc.ServerStream, m *Method, body io.Reader) error {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data:")
		if !ok {
			continue
		}
		var ev struct {
			Result json.RawMessage `json:"result"`
			Error  *apiError       `json:"error"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(line)), &ev); err != nil {
			return status.Errorf(codes.Internal, "decode a stream event: %v", err)
		}
		if ev.Error != nil {
			return status.Error(codes.Code(ev.Error.Code), ev.Error.Message)
		}
		if err := send(stream, m, ev.Result); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil && stream.Context().Err() == nil {
		return status.Errorf(codes.Unavailable, "the event stream ended: %v", err)
	}
	return nil
}

// apiError is wavecd's (and Argo CD's) REST error body.
type apiError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// do sends a REST call with the caller's token; an error answer becomes
// the gRPC status its code names.
func (g *Gateway) do(ctx context.Context, r restRequest, token string) (*http.Response, error) {
	u := g.opts.Upstream + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.verb, u, body)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := g.opts.Client.Do(req)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "wavecd's API: %v", err)
	}
	slog.DebugContext(ctx, "gateway call", "verb", r.verb, "path", r.path, "status", resp.StatusCode, "duration", time.Since(start))
	if resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	var e apiError
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(b, &e) != nil || e.Message == "" {
		return nil, status.Errorf(codes.Unknown, "%s %s: %s", r.verb, r.path, resp.Status)
	}
	return nil, status.Error(codes.Code(e.Code), e.Message)
}

// token is the caller's token: the token metadata the argocd CLI sends,
// or a bearer authorization.
func token(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if t := md.Get("token"); len(t) > 0 {
		return t[0]
	}
	for _, a := range md.Get("authorization") {
		if t, ok := strings.CutPrefix(a, "Bearer "); ok {
			return t
		}
	}
	return ""
}

// Handler serves the gateway over HTTP: gRPC (HTTP/2) and gRPC-web (what
// the argocd CLI's --grpc-web sends), as argocd-server does.
func (g *Gateway) Handler() http.Handler {
	srv := g.GRPCServer()
	web := grpcweb.WrapServer(srv, grpcweb.WithOriginFunc(func(string) bool { return true }))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if web.IsGrpcWebRequest(r) {
			web.ServeHTTP(w, r)
			return
		}
		srv.ServeHTTP(w, r)
	})
}
