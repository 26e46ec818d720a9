package gateway

import (
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"

	gogoproto "github.com/gogo/protobuf/proto"
)

// restRequest is the REST call of one RPC.
type restRequest struct {
	verb, path string
	query      url.Values
	body       []byte // nil: none
}

// toREST turns a request message into its REST call: path templates
// filled from the message's fields, the body field (or the whole message)
// as JSON, and, without a whole-message body, the other fields in the
// query, as grpc-gateway maps them.
func (m *Method) toREST(in gogoproto.Message) (restRequest, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return restRequest{}, fmt.Errorf("encode %s: %w", m.In, err)
	}
	fields := map[string]any{}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return restRequest{}, fmt.Errorf("encode %s: %w", m.In, err)
	}
	req := restRequest{verb: m.Verb, query: url.Values{}}
	used := map[string]bool{}
	path := m.Path
	for {
		start := strings.Index(path, "{")
		if start < 0 {
			break
		}
		end := strings.Index(path[start:], "}") + start
		field := path[start+1 : end]
		field, _, _ = strings.Cut(field, "=") // {subresource=**}
		value := fmt.Sprint(lookup(fields, field))
		if lookup(fields, field) == nil {
			value = ""
		}
		used[field] = true
		path = path[:start] + url.PathEscape(value) + path[end+1:]
		if field == "subresource" {
			path = strings.ReplaceAll(path, "%2F", "/")
		}
	}
	req.path = path
	switch m.Body {
	case "*":
		req.body = raw
		return req, nil
	case "":
	default:
		b, err := json.Marshal(lookup(fields, m.Body))
		if err != nil {
			return restRequest{}, err
		}
		req.body = b
		used[m.Body] = true
	}
	for k, v := range fields {
		addQuery(req.query, k, v, used)
	}
	return req, nil
}

// lookup follows a dotted field path through decoded JSON.
func lookup(fields map[string]any, path string) any {
	var cur any = fields
	for _, p := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// addQuery adds a field to the query: scalars as themselves, lists as
// repeated parameters, messages flattened with dots; fields in the path
// (used) are left out.
func addQuery(q url.Values, key string, v any, used map[string]bool) {
	if used[key] {
		return
	}
	switch x := v.(type) {
	case nil:
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			addQuery(q, key+"."+k, x[k], used)
		}
	case []any:
		for _, e := range x {
			q.Add(key, fmt.Sprint(e))
		}
	case string:
		if x != "" {
			q.Add(key, x)
		}
	case bool:
		q.Add(key, strconv.FormatBool(x))
	default:
		q.Add(key, fmt.Sprint(x))
	}
}

// newMessage makes a message of a registered pointer type.
func newMessage(t reflect.Type) gogoproto.Message {
	return reflect.New(t.Elem()).Interface().(gogoproto.Message)
}
