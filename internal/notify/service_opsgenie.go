package notify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// OpsgenieNotification is a template's opsgenie: fields, the parts of an
// alert besides its message.
type OpsgenieNotification struct {
	Description string            `json:"description,omitempty"`
	Priority    string            `json:"priority,omitempty"`
	Alias       string            `json:"alias,omitempty"`
	Note        string            `json:"note,omitempty"`
	Actions     []string          `json:"actions,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	VisibleTo   []map[string]any  `json:"visibleTo,omitempty" notify:"literal"`
	User        string            `json:"user,omitempty"`
}

// opsgenieOptions are service.opsgenie's options: the API's URL and an
// API key per team (the recipient).
type opsgenieOptions struct {
	APIURL  string            `json:"apiUrl"`
	APIKeys map[string]string `json:"apiKeys"`
	transportOptions
}

type opsgenieService struct {
	opts   opsgenieOptions
	client *http.Client
}

func newOpsgenieService(raw []byte, env serviceEnv) (Service, error) {
	var o opsgenieOptions
	if err := decodeOptions(raw, &o); err != nil {
		return nil, err
	}
	o.APIURL = strings.TrimRight(cmp.Or(o.APIURL, "https://api.opsgenie.com"), "/")
	client, err := o.httpClient(o.APIURL, env)
	if err != nil {
		return nil, err
	}
	return &opsgenieService{opts: o, client: client}, nil
}

// Send creates an alert for the recipient team.
func (s *opsgenieService) Send(ctx context.Context, n *Notification, dest Destination) error {
	key, ok := s.opts.APIKeys[dest.Recipient]
	if !ok {
		return fmt.Errorf("no API key configured for recipient %q (apiKeys)", dest.Recipient)
	}
	alert := struct {
		Message    string              `json:"message"`
		Source     string              `json:"source"`
		Responders []map[string]string `json:"responders"`
		*OpsgenieNotification
	}{Message: n.Message, Source: "Argo CD", Responders: []map[string]string{{"type": "team", "id": dest.Recipient}}}
	if o := n.Opsgenie; o != nil {
		if o.Description == "" {
			return errors.New("opsgenie.description is missing")
		}
		alert.OpsgenieNotification = o
	}
	_, err := postJSON(ctx, s.client, s.opts.APIURL+"/v2/alerts", alert, map[string]string{"Authorization": "GenieKey " + key})
	return err
}
