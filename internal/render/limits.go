package render

import (
	"fmt"
	"io"
	"strings"
	stdsync "sync"

	"k8s.io/apimachinery/pkg/api/resource"
)

// argocd-cm keys of the render limits. The directory one is Argo CD's
// repo-server setting of the same name; the others follow its naming.
const (
	KeyMaxManifestSize  = "reposerver.max.manifest.size"
	KeyMaxDirectorySize = "reposerver.max.combined.directory.manifests.size"
	KeyMaxAppSize       = "reposerver.max.combined.manifests.size"
)

// Default limits. A Kubernetes object larger than the API server's 3 MiB
// request limit cannot be applied anyway; 10M is Argo CD's default for a
// Directory source.
const (
	DefaultMaxManifestSize  = 3 << 20
	DefaultMaxDirectorySize = 10 * 1000 * 1000
	DefaultMaxAppSize       = 50 * 1000 * 1000
)

// Limits bound what one render reads and produces, so that one oversized
// input fails its own app with an error instead of exhausting the memory
// every app's reconciliation shares. Zero fields take the defaults.
type Limits struct {
	// MaxManifestSize bounds one YAML or JSON document, in bytes.
	MaxManifestSize int64
	// MaxDirectorySize bounds the combined size of the files one
	// Directory source reads.
	MaxDirectorySize int64
	// MaxAppSize bounds an app's whole rendered output (every source,
	// whatever the tool: Directory, Helm, Kustomize, plugins).
	MaxAppSize int64
}

// ParseLimits reads the limits from argocd-cm's data: quantities such as
// "10M", "3Mi" or plain bytes.
func ParseLimits(data map[string]string) (Limits, error) {
	var l Limits
	for key, dst := range map[string]*int64{
		KeyMaxManifestSize: &l.MaxManifestSize, KeyMaxDirectorySize: &l.MaxDirectorySize, KeyMaxAppSize: &l.MaxAppSize,
	} {
		v := strings.TrimSpace(data[key])
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() <= 0 {
			return Limits{}, fmt.Errorf("argocd-cm key %s: %q is not a positive size such as 10M or 3Mi", key, v)
		}
		*dst = q.Value()
	}
	return l.withDefaults(), nil
}

func (l Limits) withDefaults() Limits {
	if l.MaxManifestSize <= 0 {
		l.MaxManifestSize = DefaultMaxManifestSize
	}
	if l.MaxDirectorySize <= 0 {
		l.MaxDirectorySize = DefaultMaxDirectorySize
	}
	if l.MaxAppSize <= 0 {
		l.MaxAppSize = DefaultMaxAppSize
	}
	return l
}

// SizeError is input over one of the limits.
type SizeError struct {
	// What was too large: a file, a document, a tool's output.
	What string
	// Size is the size that passed the limit: of a file, or the running
	// total of a budget (a stream is not read further once past it).
	Size, Limit int64
	// Setting is the argocd-cm key that raises the limit.
	Setting string
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("%s: %s, over the limit of %s (argocd-cm %s raises it)",
		e.What, fmtBytes(e.Size), fmtBytes(e.Limit), e.Setting)
}

// fmtBytes prints n the way the settings are usually written.
func fmtBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n >= 1000*1000 && n%(1000*1000) == 0:
		return fmt.Sprintf("%dM", n/(1000*1000))
	case n >= 1000*1000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Budget counts the bytes a render produces against one limit: every
// file, tool output or stream charged to it adds up. It is safe for
// concurrent use. Renderers of external tools (plugins) charge their
// output through Reader as they read it, so an oversized output is cut
// off without being held in memory.
type Budget struct {
	mu      stdsync.Mutex
	used    int64
	limit   int64
	setting string
}

// NewBudget returns a budget of limit bytes; setting names the argocd-cm
// key that raises it, for the error.
func NewBudget(limit int64, setting string) *Budget {
	return &Budget{limit: limit, setting: setting}
}

// Take charges n bytes of what; past the limit it returns a *SizeError
// naming what and the running total.
func (b *Budget) Take(what string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += n
	if b.used > b.limit {
		return &SizeError{What: what, Size: b.used, Limit: b.limit, Setting: b.setting}
	}
	return nil
}

// Used is the number of bytes charged so far.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Reader returns r charging every byte read to the budget: once the
// budget is spent, Read returns a *SizeError naming what.
func (b *Budget) Reader(what string, r io.Reader) io.Reader {
	return &budgetReader{b: b, what: what, r: r}
}

type budgetReader struct {
	b    *Budget
	what string
	r    io.Reader
	err  error
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if br.err != nil {
		return 0, br.err
	}
	n, err := br.r.Read(p)
	if terr := br.b.Take(br.what, int64(n)); terr != nil {
		br.err = terr
		return n, terr
	}
	return n, err
}
