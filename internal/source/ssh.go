package source

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/transport"
	gitssh "github.com/go-git/go-git/v5/plumbing/transport/ssh"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// knownHosts are the SSH host keys trusted for SSH repositories.
type knownHosts struct {
	callback   ssh.HostKeyCallback
	algorithms func(hostWithPort string) []string
}

// parseKnownHosts parses known_hosts lines (the ssh_known_hosts key of
// Argo CD's argocd-ssh-known-hosts-cm). Blank data gives nil: go-git then
// reads SSH_KNOWN_HOSTS or ~/.ssh/known_hosts.
func parseKnownHosts(data string) (*knownHosts, error) {
	if strings.TrimSpace(data) == "" {
		return nil, nil
	}
	// The known_hosts readers take files only; the file is read at once.
	f, err := os.CreateTemp("", "wavecd-known-hosts-")
	if err != nil {
		return nil, fmt.Errorf("SSH known hosts: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("SSH known hosts: %w", err)
	}
	db, err := gitssh.NewKnownHostsDb(f.Name())
	if err != nil {
		return nil, fmt.Errorf("SSH known hosts: %s", strings.ReplaceAll(err.Error(), f.Name(), "line"))
	}
	return &knownHosts{callback: db.HostKeyCallback(), algorithms: db.HostKeyAlgorithms}, nil
}

// sshAuth authenticates with the private key of c as the user repoURL
// names (else c.Username, else "git"), checking the server's host key
// against hosts unless c is insecure.
func (c *RepoCredential) sshAuth(repoURL string, hosts *knownHosts) (transport.AuthMethod, error) {
	ep, err := transport.NewEndpoint(repoURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c, err)
	}
	user := firstNonEmpty(ep.User, c.Username, "git")
	keys, err := gitssh.NewPublicKeys(user, []byte(c.SSHPrivateKey), "")
	if err != nil {
		return nil, fmt.Errorf("%s: parse SSH private key: invalid key", c)
	}
	switch {
	case c.Insecure:
		keys.HostKeyCallback = ssh.InsecureIgnoreHostKey() //nolint:gosec // the Secret asked for it
	case hosts != nil:
		port := ep.Port
		if port == 0 {
			port = 22
		}
		keys.HostKeyCallback = hosts.callback
		keys.HostKeyAlgorithms = hosts.algorithms(net.JoinHostPort(ep.Host, strconv.Itoa(port)))
	}
	return keys, nil
}

// isSSHURL reports an ssh:// or user@host:path repository URL.
func isSSHURL(u string) bool {
	return strings.HasPrefix(u, "ssh://") || strings.HasPrefix(u, "git+ssh://") || isSCPLike(u)
}

// authHint explains a transport error a user can fix in a Secret or in
// the known hosts.
func authHint(err error) string {
	var keyErr *knownhosts.KeyError
	switch {
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed),
		strings.Contains(err.Error(), "ssh: unable to authenticate"):
		return " (check the repository credentials)"
	case errors.As(err, &keyErr) && len(keyErr.Want) > 0:
		return " (the server's SSH host key differs from the known hosts)"
	case errors.As(err, &keyErr):
		return " (the SSH host is not in the known hosts)"
	case strings.Contains(err.Error(), "unable to find any valid known_hosts file"):
		return " (no SSH known hosts are configured and the repository is not marked insecure)"
	}
	return ""
}

func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
