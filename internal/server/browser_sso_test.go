package server_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSSO signs in through the login page's "Log in via" button,
// at a real OpenID provider, and out again.
func TestBrowserSSO(t *testing.T) {
	browser := newBrowser(t)
	s := newSSOHarness(t)
	b := &browserSteps{t: t, ctx: browser, dir: artifactDir(t, "browser-sso")}
	b.run("login-page", 30*time.Second,
		chromedp.Navigate(s.base+"/applications/guestbook"),
		chromedp.WaitVisible(chromedp.CSS("#sso-login")),
	)
	if got := b.text("#sso-login"); got != "Log in via Example IdP" {
		t.Errorf("the SSO button says %q", got)
	}
	b.run("provider-login", 30*time.Second,
		chromedp.Click(chromedp.CSS("#sso-login")),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/login/username"] #username`)),
		chromedp.SendKeys(chromedp.CSS("#username"), "alice"),
		chromedp.SendKeys(chromedp.CSS("#password"), alicePass),
	)
	b.run("back-at-the-app", 30*time.Second,
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#app-sync`)),
	)
	if got := b.text(".crumbs strong"); got != "guestbook" {
		t.Errorf("after the sign-in the browser shows %q, want the page it asked for (guestbook)", got)
	}
	if got := b.text(".user .username"); got != "u-alice" {
		t.Errorf("the signed-in user is %q, want u-alice", got)
	}
	b.run("logged-out", 30*time.Second,
		chromedp.Click(chromedp.CSS(`.user button`)),
		chromedp.WaitVisible(chromedp.CSS("#sso-login")),
		chromedp.Navigate(s.base+"/applications"),
		chromedp.WaitVisible(chromedp.CSS("#login-form")),
	)
}
