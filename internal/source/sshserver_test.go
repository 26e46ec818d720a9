package source

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sshKey is a new ed25519 key: its private half in OpenSSH PEM form, as a
// repository Secret holds it, and its public half.
type sshKey struct {
	private string
	public  ssh.PublicKey
	signer  ssh.Signer
}

func newSSHKey(t *testing.T) sshKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	sshPub, err := ssh.NewPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return sshKey{private: string(pem.EncodeToMemory(block)), public: sshPub, signer: signer}
}

// sshServer serves `git-upload-pack` for the bare repositories under root
// on 127.0.0.1 to clients holding one accepted key.
type sshServer struct {
	Addr    string // 127.0.0.1:PORT
	HostKey sshKey
	root    string
	config  *ssh.ServerConfig
	ln      net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   []net.Conn
}

func serveSSH(t *testing.T, root string, accepted ssh.PublicKey) *sshServer {
	t.Helper()
	s := &sshServer{HostKey: newSSHKey(t), root: root}
	s.config = &ssh.ServerConfig{PublicKeyCallback: func(_ ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
		if bytes.Equal(key.Marshal(), accepted.Marshal()) {
			return nil, nil
		}
		return nil, errors.New("key not accepted")
	}}
	s.config.AddHostKey(s.HostKey.signer)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln, s.Addr = ln, ln.Addr().String()
	s.wg.Go(s.accept)
	t.Cleanup(s.close)
	return s
}

// KnownHostsLine is the known_hosts line of this server with key.
func (s *sshServer) KnownHostsLine(key ssh.PublicKey) string {
	return knownhosts.Line([]string{knownhosts.Normalize(s.Addr)}, key) + "\n"
}

func (s *sshServer) close() {
	s.ln.Close()
	s.mu.Lock()
	for _, c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *sshServer) accept() {
	for {
		conn, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns = append(s.conns, conn)
		s.mu.Unlock()
		s.wg.Go(func() { s.serveConn(conn) })
	}
}

func (s *sshServer) serveConn(conn net.Conn) {
	defer conn.Close()
	_, chans, reqs, err := ssh.NewServerConn(conn, s.config)
	if err != nil {
		return
	}
	go ssh.DiscardRequests(reqs)
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "sessions only")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			return
		}
		s.wg.Go(func() { s.serveSession(ch, chReqs) })
	}
}

// serveSession runs the one command a session asks for: git-upload-pack
// of a repository under root.
func (s *sshServer) serveSession(ch ssh.Channel, reqs <-chan *ssh.Request) {
	defer ch.Close()
	for req := range reqs {
		if req.Type != "exec" {
			_ = req.Reply(false, nil) // env, pty-req: not needed
			continue
		}
		_ = req.Reply(true, nil)
		status := s.exec(ch, commandOf(req.Payload))
		_, _ = ch.SendRequest("exit-status", false, binary.BigEndian.AppendUint32(nil, status))
		return
	}
}

// commandOf decodes an exec request's payload: one SSH string.
func commandOf(payload []byte) string {
	if len(payload) < 4 || int(binary.BigEndian.Uint32(payload)) != len(payload)-4 {
		return ""
	}
	return string(payload[4:])
}

func (s *sshServer) exec(ch ssh.Channel, command string) uint32 {
	repo, ok := strings.CutPrefix(command, "git-upload-pack ")
	repo = strings.Trim(repo, "'")
	if !ok || strings.Contains(repo, "..") {
		fmt.Fprintf(ch.Stderr(), "unsupported command %q\n", command)
		return 1
	}
	cmd := exec.Command("git", "upload-pack", filepath.Join(s.root, filepath.FromSlash(repo)))
	cmd.Stdout, cmd.Stderr = ch, ch.Stderr()
	// A pipe, not cmd.Stdin = ch: Wait must not wait for the client to
	// close its side.
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 1
	}
	s.wg.Go(func() {
		_, _ = io.Copy(stdin, ch)
		stdin.Close()
	})
	if err := cmd.Run(); err != nil {
		return 1
	}
	return 0
}
