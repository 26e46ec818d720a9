// Package idp runs a real OpenID provider on loopback for tests: the
// example provider of github.com/zitadel/oidc (its op package, storage and
// login page), with users who belong to groups. It issues the groups
// claim for the "groups" scope, and puts the profile and email claims in
// the ID token, as providers configured for Argo CD usually do.
package idp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/text/language"
)

// User is a user of the provider.
type User struct {
	ID, Username, Password, Email string
	Groups                        []string
}

// Client is a registered OAuth client.
type Client struct {
	ID, Secret   string
	RedirectURIs []string
	// Native clients (CLIs) have no secret and must use PKCE.
	Native bool
}

// Options shape a Provider.
type Options struct {
	Users   []User
	Clients []Client
	// IDTokenLifetime is how long ID tokens live (default 1h).
	IDTokenLifetime time.Duration
}

// Provider is a running OpenID provider. Issuer is its URL.
type Provider struct {
	Issuer string
	srv    *http.Server
	ln     net.Listener
	done   chan struct{}

	store    *store
	mu       sync.Mutex
	refreshs int
}

// AddClient registers a client, or replaces the one of its ID: a test
// that learns its redirect URI after the provider starts adds it then.
func (p *Provider) AddClient(c Client) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.store.clients[c.ID] = c
}

// Start runs a provider on 127.0.0.1; Close stops it.
func Start(o Options) (*Provider, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	if o.IDTokenLifetime <= 0 {
		o.IDTokenLifetime = time.Hour
	}
	p := &Provider{Issuer: "http://" + ln.Addr().String(), ln: ln, done: make(chan struct{})}
	users := userStore{byID: map[string]*storage.User{}, groups: map[string][]string{}}
	for _, u := range o.Users {
		users.byID[u.ID] = &storage.User{
			ID: u.ID, Username: u.Username, Password: u.Password, Email: u.Email, EmailVerified: true,
			FirstName: u.Username, LastName: "Tester", PreferredLanguage: language.English,
		}
		users.groups[u.ID] = u.Groups
	}
	st := &store{Storage: storage.NewStorageWithClients(users, map[string]*storage.Client{}), users: users,
		lifetime: o.IDTokenLifetime, p: p, clients: map[string]Client{}}
	p.store = st
	for _, c := range o.Clients {
		p.AddClient(c)
	}
	p.srv = &http.Server{Handler: exampleop.SetupServer(p.Issuer, st, nil, false), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// Close stops the provider.
func (p *Provider) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	<-p.done
	return err
}

// Refreshes counts the refresh token grants the provider answered.
func (p *Provider) Refreshes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refreshs
}

// userStore is the storage's user store, and the groups of each user.
type userStore struct {
	byID   map[string]*storage.User
	groups map[string][]string
}

func (u userStore) GetUserByID(id string) *storage.User { return u.byID[id] }

func (u userStore) GetUserByUsername(name string) *storage.User {
	for _, user := range u.byID {
		if user.Username == name {
			return user
		}
	}
	return nil
}

func (u userStore) ExampleClientID() string { return storage.ServiceUserID }

// store adds the groups claim and the ID token settings to the example
// storage.
type store struct {
	*storage.Storage
	users    userStore
	lifetime time.Duration
	p        *Provider
	clients  map[string]Client // guarded by p.mu
}

func (s *store) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	s.p.mu.Lock()
	c, ok := s.clients[id]
	s.p.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("client %q not found", id)
	}
	if c.Native {
		return client{Client: storage.NativeClient(c.ID, c.RedirectURIs...), lifetime: s.lifetime}, nil
	}
	return client{Client: storage.WebClient(c.ID, c.Secret, c.RedirectURIs...), lifetime: s.lifetime}, nil
}

func (s *store) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	s.p.mu.Lock()
	c, ok := s.clients[id]
	s.p.mu.Unlock()
	if !ok || c.Native || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return errors.New("invalid client or secret")
	}
	return nil
}

func (s *store) SetUserinfoFromRequest(ctx context.Context, info *oidc.UserInfo, req op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, info, req, scopes); err != nil {
		return err
	}
	for _, sc := range scopes {
		if sc == "groups" {
			info.AppendClaims("groups", s.users.groups[req.GetSubject()])
		}
	}
	return nil
}

func (s *store) TokenRequestByRefreshToken(ctx context.Context, token string) (op.RefreshTokenRequest, error) {
	s.p.mu.Lock()
	s.p.refreshs++
	s.p.mu.Unlock()
	return s.Storage.TokenRequestByRefreshToken(ctx, token)
}

// client lets the groups scope through and puts the user's claims in the
// ID token.
type client struct {
	op.Client
	lifetime time.Duration
}

func (c client) IsScopeAllowed(scope string) bool {
	return scope == "groups" || c.Client.IsScopeAllowed(scope)
}

func (c client) IDTokenUserinfoClaimsAssertion() bool { return true }

func (c client) IDTokenLifetime() time.Duration { return c.lifetime }
