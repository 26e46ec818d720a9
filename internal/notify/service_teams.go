package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// TeamsNotification is a template's teams: fields, the parts of an Office
// 365 connector card (facts, sections and potentialAction are JSON lists);
// template replaces the whole card.
type TeamsNotification struct {
	Template        string `json:"template,omitempty"`
	Title           string `json:"title,omitempty"`
	Summary         string `json:"summary,omitempty"`
	Text            string `json:"text,omitempty"`
	ThemeColor      string `json:"themeColor,omitempty"`
	Facts           string `json:"facts,omitempty"`
	Sections        string `json:"sections,omitempty"`
	PotentialAction string `json:"potentialAction,omitempty"`
}

// teamsOptions are service.teams' options: an incoming webhook URL per
// recipient.
type teamsOptions struct {
	RecipientUrls map[string]string `json:"recipientUrls"`
	transportOptions
}

type teamsService struct {
	opts    teamsOptions
	clients map[string]*http.Client
}

func newTeamsService(raw []byte, env serviceEnv) (Service, error) {
	var o teamsOptions
	if err := decodeOptions(raw, &o); err != nil {
		return nil, err
	}
	s := &teamsService{opts: o, clients: map[string]*http.Client{}}
	for r, u := range o.RecipientUrls {
		c, err := o.httpClient(u, env)
		if err != nil {
			return nil, fmt.Errorf("recipientUrls.%s: %w", r, err)
		}
		s.clients[r] = c
	}
	return s, nil
}

// Send posts the card to the recipient's webhook. The connector answers
// "1" when it took the card; any other text is its error.
func (s *teamsService) Send(ctx context.Context, n *Notification, dest Destination) error {
	u, ok := s.opts.RecipientUrls[dest.Recipient]
	if !ok {
		return fmt.Errorf("no teams webhook configured for recipient %q (recipientUrls)", dest.Recipient)
	}
	card, err := teamsCard(n)
	if err != nil {
		return err
	}
	body, err := postJSON(ctx, s.clients[dest.Recipient], u, card, nil)
	if err != nil {
		return err
	}
	if b := strings.TrimSpace(string(body)); b != "" && b != "1" {
		return fmt.Errorf("teams webhook post error: %s", clip(b, maxErrorBody))
	}
	return nil
}

// teamsCard builds the MessageCard, or returns teams.template as it is.
func teamsCard(n *Notification) ([]byte, error) {
	t := n.Teams
	if t != nil && t.Template != "" {
		return []byte(t.Template), nil
	}
	card := map[string]any{
		"@type": "MessageCard", "@context": "https://schema.org/extensions",
		"text": n.Message, "title": "", "summary": "",
	}
	if t == nil {
		return json.Marshal(card)
	}
	for k, v := range map[string]string{"title": t.Title, "summary": t.Summary, "text": t.Text, "themeColor": t.ThemeColor} {
		if v != "" {
			card[k] = v
		}
	}
	var sections []any
	if t.Sections != "" {
		if err := json.Unmarshal([]byte(t.Sections), &sections); err != nil {
			return nil, fmt.Errorf("teams.sections is not a JSON list: %w", err)
		}
	}
	if t.Facts != "" {
		var facts []any
		if err := json.Unmarshal([]byte(t.Facts), &facts); err != nil {
			return nil, fmt.Errorf("teams.facts is not a JSON list: %w", err)
		}
		sections = append(sections, map[string]any{"facts": facts})
	}
	if sections != nil {
		card["sections"] = sections
	}
	if t.PotentialAction != "" {
		var actions []any
		if err := json.Unmarshal([]byte(t.PotentialAction), &actions); err != nil {
			return nil, fmt.Errorf("teams.potentialAction is not a JSON list: %w", err)
		}
		card["potentialAction"] = actions
	}
	return json.Marshal(card)
}
