package notify

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// SlackNotification is a template's slack: fields.
type SlackNotification struct {
	Username    string `json:"username,omitempty"`
	Icon        string `json:"icon,omitempty"`
	Attachments string `json:"attachments,omitempty"`
	Blocks      string `json:"blocks,omitempty"`
	// GroupingKey threads the messages of one key: the first is posted,
	// the next ones reply to it (or, with DeliveryPolicy Update or
	// PostAndUpdate, update it).
	GroupingKey     string `json:"groupingKey,omitempty"`
	NotifyBroadcast bool   `json:"notifyBroadcast,omitempty"`
	// DeliveryPolicy is Post (default), PostAndUpdate or Update.
	DeliveryPolicy string `json:"deliveryPolicy,omitempty" notify:"literal"`
}

// slackOptions are service.slack's options.
type slackOptions struct {
	Token         string   `json:"token"`
	Username      string   `json:"username"`
	Icon          string   `json:"icon"`
	SigningSecret string   `json:"signingSecret"`
	Channels      []string `json:"channels"`
	APIURL        string   `json:"apiURL"`
	DisableUnfurl bool     `json:"disableUnfurl"`
	transportOptions
}

// slackAPIURL is Slack's Web API.
const slackAPIURL = "https://slack.com/api/"

type slackService struct {
	opts    slackOptions
	client  *http.Client
	threads *slackThreads
}

func newSlackService(raw []byte, env serviceEnv) (Service, error) {
	var o slackOptions
	if err := decodeOptions(raw, &o); err != nil {
		return nil, err
	}
	if o.Token == "" {
		return nil, fmt.Errorf("token is required")
	}
	if o.APIURL == "" {
		o.APIURL = slackAPIURL
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/"
	}
	client, err := o.httpClient(o.APIURL, env)
	if err != nil {
		return nil, err
	}
	threads := env.threads
	if threads == nil {
		threads = newSlackThreads()
	}
	return &slackService{opts: o, client: client, threads: threads}, nil
}

var slackEmoji = regexp.MustCompile(`^:.+:$`)

// message builds chat.postMessage's form: the text, the template's
// attachments and blocks (JSON), the username and icon (the template's
// win over the service's).
func (s *slackService) message(n *Notification, channel string) (url.Values, error) {
	v := url.Values{"channel": {channel}, "text": {n.Message}}
	sn := n.Slack
	if sn == nil {
		sn = &SlackNotification{}
	}
	if u := cmp.Or(sn.Username, s.opts.Username); u != "" {
		v.Set("username", u)
	}
	switch icon := cmp.Or(sn.Icon, s.opts.Icon); {
	case icon == "":
	case slackEmoji.MatchString(icon):
		v.Set("icon_emoji", icon)
	case strings.HasPrefix(icon, "https://") || strings.HasPrefix(icon, "http://"):
		v.Set("icon_url", icon)
	}
	for field, raw := range map[string]string{"attachments": sn.Attachments, "blocks": sn.Blocks} {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		var list []any
		if err := json.Unmarshal([]byte(raw), &list); err != nil {
			return nil, fmt.Errorf("slack.%s is not a JSON list: %w", field, err)
		}
		b, _ := json.Marshal(list)
		v.Set(field, string(b))
	}
	if s.opts.DisableUnfurl {
		v.Set("unfurl_links", "false")
		v.Set("unfurl_media", "false")
	}
	return v, nil
}

// Send posts the message to the recipient channel, threading and
// updating by groupingKey as the template's deliveryPolicy says.
func (s *slackService) Send(ctx context.Context, n *Notification, dest Destination) error {
	v, err := s.message(n, dest.Recipient)
	if err != nil {
		return err
	}
	var key, policy string
	var broadcast bool
	if n.Slack != nil {
		key, policy, broadcast = n.Slack.GroupingKey, n.Slack.DeliveryPolicy, n.Slack.NotifyBroadcast
	}
	thread := slackThread{}
	if key != "" {
		thread = s.threads.get(dest.Recipient, key)
	}
	if thread.ts == "" || policy == "" || policy == "Post" || policy == "PostAndUpdate" {
		post := maps.Clone(v)
		if thread.ts != "" {
			post.Set("thread_ts", thread.ts)
			if broadcast {
				post.Set("reply_broadcast", "true")
			}
		}
		resp, err := s.call(ctx, "chat.postMessage", post)
		if err != nil {
			return err
		}
		if key != "" && thread.ts == "" {
			s.threads.set(dest.Recipient, key, slackThread{ts: resp.TS, channel: resp.Channel})
		}
	}
	if thread.ts != "" && (policy == "Update" || policy == "PostAndUpdate") {
		upd := maps.Clone(v)
		upd.Set("channel", cmp.Or(thread.channel, dest.Recipient))
		upd.Set("ts", thread.ts)
		upd.Set("as_user", "true")
		if _, err := s.call(ctx, "chat.update", upd); err != nil {
			return err
		}
	}
	return nil
}

type slackResponse struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// call posts a form to a Web API method with the bot token.
func (s *slackService) call(ctx context.Context, method string, form url.Values) (*slackResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.opts.APIURL+method, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", redactURLError(err))
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+s.opts.Token)
	body, err := do(s.client, req)
	if err != nil {
		return nil, fmt.Errorf("slack %s: %w", method, err)
	}
	var r slackResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("slack %s: read response: %w", method, err)
	}
	if !r.OK {
		return nil, fmt.Errorf("slack %s: %s", method, cmp.Or(r.Error, "not ok"))
	}
	return &r, nil
}

// slackThread is the first message of a grouping key in a channel.
type slackThread struct {
	ts      string
	channel string
}

// slackThreads remembers, for the controller's lifetime, the first
// message of each recipient and grouping key.
type slackThreads struct {
	mu sync.Mutex
	m  map[[2]string]slackThread
}

func newSlackThreads() *slackThreads { return &slackThreads{m: map[[2]string]slackThread{}} }

func (t *slackThreads) get(recipient, key string) slackThread {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[[2]string{recipient, key}]
}

func (t *slackThreads) set(recipient, key string, th slackThread) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.m[[2]string{recipient, key}] = th
}
