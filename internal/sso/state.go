package sso

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// StateCookie carries a login's state to the callback, as in Argo CD.
const StateCookie = "argocd.oauthstate"

// StateTTL is how long a login may take at the provider.
const StateTTL = 5 * time.Minute

// loginState is what the state cookie holds, encrypted.
type loginState struct {
	Nonce     string `json:"n"`
	ReturnURL string `json:"r"`
	Verifier  string `json:"v,omitempty"`
	Expires   int64  `json:"e"`
}

// stateKey derives the cookie's AES-256 key from server.secretkey.
func stateKey(secretKey []byte) ([]byte, error) {
	if len(secretKey) == 0 {
		return nil, errors.New("no server.secretkey in argocd-secret to protect the sign-in state")
	}
	sum := sha256.Sum256(append([]byte("wavecd sso state\x00"), secretKey...))
	return sum[:], nil
}

func sealState(secretKey []byte, s loginState) (string, error) {
	aead, err := stateAEAD(secretKey)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(aead.Seal(nonce, nonce, plain, nil)), nil
}

func openState(secretKey []byte, cookie string, now time.Time) (loginState, error) {
	var s loginState
	aead, err := stateAEAD(secretKey)
	if err != nil {
		return s, err
	}
	sealed, err := base64.RawURLEncoding.DecodeString(cookie)
	if err != nil || len(sealed) < aead.NonceSize() {
		return s, errors.New("the sign-in state cookie is malformed")
	}
	plain, err := aead.Open(nil, sealed[:aead.NonceSize()], sealed[aead.NonceSize():], nil)
	if err != nil {
		return s, errors.New("the sign-in state cookie does not decrypt: it was altered, or the server's key changed")
	}
	if err := json.Unmarshal(plain, &s); err != nil {
		return s, fmt.Errorf("the sign-in state cookie is malformed: %w", err)
	}
	if now.Unix() > s.Expires {
		return s, errors.New("the sign-in took too long: start again")
	}
	return s, nil
}

func stateAEAD(secretKey []byte) (cipher.AEAD, error) {
	key, err := stateKey(secretKey)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
