package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAPIAccounts(t *testing.T) {
	h := newAPIHarness(t, harnessOptions{})
	admin := h.admin()
	alice := h.login("alice", alicePassword)
	var list struct {
		Items []struct {
			Name         string
			Enabled      bool
			Capabilities []string
		}
	}
	h.decode(h.do("GET", "/api/v1/account", admin, nil), &list)
	var names []string
	for _, a := range list.Items {
		names = append(names, a.Name+":"+strings.Join(a.Capabilities, ","))
	}
	if strings.Join(names, " ") != "admin:login alice:login bot:apiKey" {
		t.Errorf("admin lists %v", names)
	}
	h.decode(h.do("GET", "/api/v1/account", alice, nil), &list)
	if len(list.Items) != 0 {
		t.Errorf("alice (no account rights) lists %d accounts", len(list.Items))
	}
	if r := h.do("GET", "/api/v1/account/bot", admin, nil); !strings.Contains(r.body, `"capabilities":["apiKey"]`) {
		t.Errorf("get bot: %d %s", r.status, r.body)
	}
	h.wantError("get a missing account", h.do("GET", "/api/v1/account/nobody", admin, nil), http.StatusNotFound, 5)

	// can-i, for alice (viewer of apps).
	for path, want := range map[string]string{
		"applications/get/default/guestbook":  "yes",
		"applications/sync/default/guestbook": "no",
		"clusters/get/https:%2F%2Fx":          "no",
	} {
		if r := h.do("GET", "/api/v1/account/can-i/"+path, alice, nil); !strings.Contains(r.body, `"value":"`+want+`"`) {
			t.Errorf("alice can-i %s: %d %s, want %s", path, r.status, r.body, want)
		}
	}
	h.wantError("can-i an unknown action", h.do("GET", "/api/v1/account/can-i/applications/fly/x", alice, nil), http.StatusBadRequest, 3)

	// Alice changes her password: the wrong current one, a short new one,
	// then right; her old session ends, the new password logs in.
	pw := func(token, name, current, next string) response {
		return h.do("PUT", "/api/v1/account/password", token, map[string]string{"name": name, "currentPassword": current, "newPassword": next})
	}
	r := pw(alice, "", "wrong", "a-new-Passw0rd")
	if h.wantError("wrong current password", r, http.StatusBadRequest, 3); !strings.Contains(r.body, "current password does not match") {
		t.Errorf("wrong current password: %s", r.body)
	}
	r = pw(alice, "", alicePassword, "short")
	if !strings.Contains(r.body, "new password does not match the following expression: ^.{8,32}$") {
		t.Errorf("short password: %d %s", r.status, r.body)
	}
	h.wantError("alice changes admin's password", pw(alice, "admin", alicePassword, "a-new-Passw0rd"), http.StatusForbidden, 7)
	// A password's change time is kept to the second, as Argo CD keeps
	// it, and a session of the same second survives it.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second)))
	if r = pw(alice, "", alicePassword, "a-new-Passw0rd"); r.status != http.StatusOK {
		t.Fatalf("change the password: %d %s", r.status, r.body)
	}
	h.wantError("alice's session after the change", h.do("GET", "/api/v1/applications", alice, nil), http.StatusUnauthorized, 16)
	h.login("alice", "a-new-Passw0rd")
	// admin resets it with admin's own password.
	if r = pw(admin, "alice", h.adminPassword, alicePassword); r.status != http.StatusOK {
		t.Errorf("admin resets alice's password: %d %s", r.status, r.body)
	}
	alice = h.login("alice", alicePassword)

	// API tokens of bot: issue (with expiresIn as a string, as Argo CD's
	// gateway writes it), use, delete.
	r = h.do("POST", "/api/v1/account/bot/token", admin, map[string]any{"expiresIn": "3600"})
	var tok struct{ Token string }
	if h.decode(r, &tok); tok.Token == "" {
		t.Fatalf("generate a token: %d %s", r.status, r.body)
	}
	if r = h.do("GET", "/api/v1/session/userinfo", tok.Token, nil); !strings.Contains(r.body, `"username":"bot"`) {
		t.Errorf("bot's token: %s", r.body)
	}
	var bot struct{ Tokens []struct{ ID string } }
	h.decode(h.do("GET", "/api/v1/account/bot", admin, nil), &bot)
	if len(bot.Tokens) != 1 {
		t.Fatalf("bot's tokens: %+v", bot)
	}
	h.wantError("alice issues a token", h.do("POST", "/api/v1/account/bot/token", alice, map[string]any{}), http.StatusForbidden, 7)
	if r = h.do("DELETE", "/api/v1/account/bot/token/"+bot.Tokens[0].ID, admin, nil); r.status != http.StatusOK {
		t.Errorf("delete the token: %d %s", r.status, r.body)
	}
	h.wantError("the deleted token", h.do("GET", "/api/v1/applications", tok.Token, nil), http.StatusUnauthorized, 16)
	h.wantError("delete it again", h.do("DELETE", "/api/v1/account/bot/token/"+bot.Tokens[0].ID, admin, nil), http.StatusNotFound, 5)
}
