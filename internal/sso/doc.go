// Package sso owns sign-in through an OpenID Connect provider, configured
// as Argo CD configures it: argocd-cm's `oidc.config` (issuer, clientID,
// clientSecret, cliClientID, requestedScopes, requestedIDTokenClaims,
// logoutURL, rootCA, enablePKCEAuthentication, allowedAudiences,
// refreshTokenThreshold) and `url`, the server's external URL. A value
// that starts with `$` is read from a Secret: `$key` from argocd-secret,
// `$name:key` from Secret name, which must carry the label
// app.kubernetes.io/part-of=argocd.
//
// The flow is the authorization code flow. The server's /auth/login sends
// the browser to the provider with a random state and, when the provider
// offers S256 or the config asks for it, a PKCE challenge; both travel in
// the argocd.oauthstate cookie, encrypted with a key derived from
// server.secretkey, with the URL to return to. /auth/callback checks the
// state, exchanges the code (with the PKCE verifier), verifies the ID
// token, and the ID token becomes the session (cookie argocd.token), as in
// Argo CD.
//
// ID tokens are verified against the provider's keys, its issuer and an
// allowed audience (clientID and cliClientID unless allowedAudiences says
// otherwise). A token within refreshTokenThreshold of its expiry, or past
// it, is refreshed with the refresh token the callback kept, in memory,
// for the session's lifetime: a login holds on the replica that served it.
//
// Nothing here decides what a signed-in user may do (internal/rbac), keeps
// local accounts (internal/auth) or serves HTTP (internal/server).
package sso
