// Command wavecd-test-idp runs the tests' OpenID provider (package idp) as
// a process of its own, for tests in other modules that cannot import it:
// the argocd CLI's tests sign in through it with argocd login --sso.
//
//	wavecd-test-idp serve --config FILE
//	    runs a provider on 127.0.0.1 until SIGTERM; it prints
//	    "issuer URL" on a line of its own once it serves. FILE is JSON:
//	    {"users": [{"id", "username", "password", "email", "groups"}],
//	     "clients": [{"id", "secret", "redirectURIs", "native"}],
//	     "idTokenLifetime": "1h"}
//	wavecd-test-idp sign-in --issuer URL --auth-url URL --username U --password P
//	    plays a browser at the provider: it opens the authorization
//	    request, fills in the login form and prints the URL the provider
//	    sends the browser back to, without opening it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wavecd/wavecd/internal/testenv/idp"
)

// config is the file serve reads.
type config struct {
	Users []struct {
		ID       string   `json:"id"`
		Username string   `json:"username"`
		Password string   `json:"password"`
		Email    string   `json:"email"`
		Groups   []string `json:"groups"`
	} `json:"users"`
	Clients []struct {
		ID           string   `json:"id"`
		Secret       string   `json:"secret"`
		RedirectURIs []string `json:"redirectURIs"`
		Native       bool     `json:"native"`
	} `json:"clients"`
	IDTokenLifetime string `json:"idTokenLifetime"`
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "wavecd-test-idp:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: wavecd-test-idp serve --config FILE | sign-in --issuer URL --auth-url URL --username U --password P")
	}
	switch args[0] {
	case "serve":
		return serve(args[1:])
	case "sign-in":
		return signIn(args[1:])
	}
	return fmt.Errorf("unknown command %q: serve or sign-in", args[0])
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path := fs.String("config", "", "the provider's users and clients (JSON)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts, err := readConfig(*path)
	if err != nil {
		return err
	}
	p, err := idp.Start(opts)
	if err != nil {
		return err
	}
	fmt.Printf("issuer %s\n", p.Issuer)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	<-ctx.Done()
	return p.Close()
}

func readConfig(path string) (idp.Options, error) {
	var c config
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return idp.Options{}, fmt.Errorf("read config %q: %w", path, err)
	}
	var opts idp.Options
	if c.IDTokenLifetime != "" {
		if opts.IDTokenLifetime, err = time.ParseDuration(c.IDTokenLifetime); err != nil {
			return idp.Options{}, fmt.Errorf("config %q: idTokenLifetime: %w", path, err)
		}
	}
	for _, u := range c.Users {
		opts.Users = append(opts.Users, idp.User{ID: u.ID, Username: u.Username, Password: u.Password, Email: u.Email, Groups: u.Groups})
	}
	for _, cl := range c.Clients {
		opts.Clients = append(opts.Clients, idp.Client{ID: cl.ID, Secret: cl.Secret, RedirectURIs: cl.RedirectURIs, Native: cl.Native})
	}
	return opts, nil
}

func signIn(args []string) error {
	fs := flag.NewFlagSet("sign-in", flag.ContinueOnError)
	issuer := fs.String("issuer", "", "the provider's issuer URL")
	authURL := fs.String("auth-url", "", "the authorization request to open")
	username := fs.String("username", "", "the user to sign in as")
	password := fs.String("password", "", "the user's password")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	u, err := idp.SignIn(ctx, *issuer, *authURL, *username, *password)
	if err != nil {
		return err
	}
	fmt.Println(u)
	return nil
}
