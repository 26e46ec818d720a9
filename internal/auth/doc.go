// Package auth owns who a request to wavecd's API is: local accounts, their
// passwords, session and API tokens, logout and the throttling of failed
// logins, with Argo CD's settings.
//
// Accounts: the built-in admin (disabled by argocd-cm admin.enabled:
// "false") and every `accounts.NAME: CAPABILITIES` key of ConfigMap
// argocd-cm (capabilities login and apiKey; accounts.NAME.enabled: "false"
// disables one). Passwords are bcrypt hashes in Secret argocd-secret,
// admin.password and accounts.NAME.password, with their *Mtime keys; API
// token records are accounts.NAME.tokens (a JSON list of id, iat, exp).
//
// Bootstrap runs when the API server starts: it generates
// server.secretkey when argocd-secret has none and, when no admin password
// is set, a random one whose hash goes to argocd-secret and whose plain
// text goes to Secret argocd-initial-admin-secret (key password), as Argo
// CD does.
//
// Tokens are JWTs signed with HMAC-SHA256 and server.secretkey: iss
// "argocd", sub "NAME:login" for a session and "NAME:apiKey" for an API
// token, iat, nbf, exp and a random jti. A session token is rejected once
// it expires, once it is revoked by logout, when its account is disabled or
// loses the login capability, and when the password changed after it was
// issued. An API token is valid while its id is listed in the account's
// tokens. Revocations are kept in memory: right for one API server
// replica; with several, a logout only holds on the replica that served it
// until the token expires.
//
// A token whose iss is not "argocd" is an ID token of the OpenID provider
// that argocd-cm's oidc.config names (internal/sso verifies and renews
// it); its user is sub (federated_claims.user_id for Dex), and its claims
// go with it so RBAC can read the groups. argocd-cm's
// users.anonymous.enabled lets requests without a token in.
//
// Failed logins are throttled per username and per client IP: after
// MaxFailures failures within Window, further attempts are refused for a
// delay that doubles with each further failure (capped), without checking
// the password.
//
// Nothing here decides what an authenticated subject may do
// (internal/rbac) or serves HTTP (internal/server).
package auth
