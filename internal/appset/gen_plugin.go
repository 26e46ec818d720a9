package appset

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/wavecd/wavecd/api/v1alpha1"
	"github.com/wavecd/wavecd/internal/settings"
)

// Plugin generator defaults, as Argo CD's.
const (
	// DefaultPluginRequeue is how often a plugin generator is asked
	// again when it sets no requeueAfterSeconds.
	DefaultPluginRequeue = 30 * time.Minute
	// defaultPluginTimeout bounds one request unless the ConfigMap's
	// requestTimeout (seconds) says otherwise.
	defaultPluginTimeout = 30 * time.Second
	// maxPluginResponse bounds what a plugin may answer.
	maxPluginResponse = 16 << 20
	// pluginPath is appended to the ConfigMap's baseUrl.
	pluginPath = "api/v1/getparams.execute"
)

// pluginRequest and pluginResponse are the plugin's HTTP protocol.
type pluginRequest struct {
	ApplicationSetName string               `json:"applicationSetName"`
	Input              v1alpha1.PluginInput `json:"input"`
}

type pluginResponse struct {
	Output struct {
		Parameters []map[string]any `json:"parameters"`
	} `json:"output"`
}

// plugin yields one parameter set per object the plugin returns, with
// `generator.input.parameters` (what it was sent) and `values`.
func (g *generation) plugin(pg *v1alpha1.PluginGenerator, parent params) ([]params, error) {
	g.noteRequeue(requeueOr(pg.RequeueAfterSeconds, DefaultPluginRequeue))
	call, err := g.pluginCall(pg)
	if err != nil {
		return nil, err
	}
	found, err := call.do(g.ctx, pluginRequest{ApplicationSetName: g.set.Name, Input: pg.Input})
	if err != nil {
		return nil, err
	}
	input := map[string]any{}
	for k, raw := range pg.Input.Parameters {
		if input[k], err = decodeTree(raw.Raw); err != nil {
			return nil, fmt.Errorf("input.parameters.%s: %w", k, err)
		}
	}
	var out []params
	for _, obj := range found {
		tree, err := toTree(obj)
		if err != nil {
			return nil, err
		}
		m, _ := tree.(map[string]any)
		p := g.elementParams(m)
		generator := map[string]any{"input": map[string]any{"parameters": input}}
		if g.r.goTemplate {
			p["generator"] = generator
		} else {
			mergeParams(p, stringParams(map[string]any{"generator": generator}), true)
		}
		if err := appendValues(p, pg.Values, parent, g.r); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// pluginCall is one plugin's endpoint, token and timeout.
type pluginCall struct {
	url, token string
	timeout    time.Duration
}

// pluginCall reads the plugin's ConfigMap (baseUrl, token, requestTimeout)
// and the Secret its token names: `$key` in argocd-secret, or
// `$secret:key` in another Secret of the namespace.
func (g *generation) pluginCall(pg *v1alpha1.PluginGenerator) (*pluginCall, error) {
	if g.in.Objects == nil {
		return nil, errors.New("the plugin generator needs the namespace's ConfigMaps and Secrets, which are not available here")
	}
	name := pg.ConfigMapRef.Name
	if name == "" {
		return nil, errors.New("configMapRef.name is empty")
	}
	cm, err := g.in.Objects.ConfigMapData(g.ctx, g.set.Namespace, name)
	if err != nil {
		return nil, err
	}
	call := &pluginCall{url: cm["baseUrl"], timeout: defaultPluginTimeout}
	if call.url == "" {
		return nil, fmt.Errorf("ConfigMap %s: baseUrl not found", name)
	}
	if !strings.HasSuffix(call.url, "/") {
		call.url += "/"
	}
	call.url += pluginPath
	if v, ok := cm["requestTimeout"]; ok {
		secs, err := strconv.Atoi(v)
		if err != nil || secs < 0 {
			return nil, fmt.Errorf("ConfigMap %s: requestTimeout %q is not a number of seconds", name, v)
		}
		if secs > 0 {
			call.timeout = time.Duration(secs) * time.Second
		}
	}
	if call.token, err = g.pluginToken(name, cm["token"]); err != nil {
		return nil, err
	}
	return call, nil
}

// pluginToken resolves the ConfigMap's token reference
// (settings.SecretRef: a key of argocd-secret, or of another Secret of the
// namespace, which Argo CD's plugin generator reads without the part-of
// label).
func (g *generation) pluginToken(cmName, v string) (string, error) {
	ref, isRef, err := settings.ParseSecretRef(v)
	if !isRef || err != nil {
		return "", fmt.Errorf("ConfigMap %s: token %q is empty or does not reference a Secret key starting with '$'", cmName, v)
	}
	sec, err := g.in.Objects.Secret(g.ctx, g.set.Namespace, ref.Secret)
	if err != nil {
		return "", fmt.Errorf("ConfigMap %s: token: %w", cmName, err)
	}
	token, err := ref.Read(sec)
	if err == nil && token == "" {
		err = fmt.Errorf("secret %s/%s has an empty %q", sec.Namespace, sec.Name, ref.Key)
	}
	if err != nil {
		return "", fmt.Errorf("ConfigMap %s: token: %w", cmName, err)
	}
	return token, nil
}

// do posts req and returns the parameter objects of the answer. A status
// outside 2xx is an error with the plugin's message.
func (c *pluginCall) do(ctx context.Context, req pluginRequest) ([]map[string]any, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", c.url, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+c.token)
	hreq.Header.Set("User-Agent", "argocd-applicationset")
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxPluginResponse+1))
	if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", c.url, err)
	}
	if len(data) > maxPluginResponse {
		return nil, fmt.Errorf("plugin %s: answer larger than %d MiB", c.url, maxPluginResponse>>20)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("plugin %s: API error with status code %d: %s", c.url, resp.StatusCode, pluginMessage(data))
	}
	var out pluginResponse
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("plugin %s: decode the answer: %w", c.url, err)
	}
	return out.Output.Parameters, nil
}

// pluginMessage is the message or error field of a JSON error answer, or
// the answer itself, shortened.
func pluginMessage(data []byte) string {
	var m struct{ Message, Error string }
	if json.Unmarshal(data, &m) == nil && (m.Message != "" || m.Error != "") {
		return strings.TrimSpace(m.Message + " " + m.Error)
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
