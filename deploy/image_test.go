package deploy_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/wavecd/wavecd/internal/buildinfo"
)

const modulePath = "github.com/wavecd/wavecd"

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestDockerfile checks the Dockerfile against what `make build` does and
// against the chart: no builder runs here, so this is its review.
func TestDockerfile(t *testing.T) {
	_ = buildinfo.Version // the -X targets below must stay variables of this package
	dockerfile := readFile(t, "../Dockerfile")
	makefile := readFile(t, "../Makefile")
	goMod := readFile(t, "../go.mod")

	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(goMod)
	if goVersion == nil {
		t.Fatal("go.mod has no go line")
	}
	checks := map[string]string{
		"builder matches go.mod's Go":  `(?m)^FROM .*golang:` + regexp.QuoteMeta(goVersion[1]) + ` AS build$`,
		"distroless static nonroot":    `(?m)^FROM gcr\.io/distroless/static-debian12:nonroot$`,
		"module cache mount":           `--mount=type=cache,target=/go/pkg/mod`,
		"build cache mount":            `--mount=type=cache,target=/root/\.cache/go-build`,
		"static binary":                `CGO_ENABLED=0`,
		"reproducible paths":           `go build -trimpath`,
		"stripped":                     `-ldflags "-s -w `,
		"the wavecd command":           `-o /out/wavecd \./cmd/wavecd( && \\)?\n`,
		"only the binaries":            `(?m)^COPY --from=build /out/wavecd /out/wavecd-argocd-api /$`,
		"the gateway, with Go 1.27":    `GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOOS=\$\{TARGETOS\} GOARCH=\$\{TARGETARCH\} \\\n +go build -trimpath -ldflags "-s -w" -o /out/wavecd-argocd-api \./cmd/wavecd-argocd-api\n`,
		"user 65532 as in the chart":   `(?m)^USER 65532:65532$`,
		"entrypoint the chart expects": `(?m)^ENTRYPOINT \["/wavecd"\]$`,
	}
	for name, pattern := range checks {
		if !regexp.MustCompile(pattern).MatchString(dockerfile) {
			t.Errorf("Dockerfile: %s: no match for %s", name, pattern)
		}
	}
	if n := strings.Count(dockerfile, "\nCOPY --from="); n != 1 {
		t.Errorf("Dockerfile copies %d times into the final image, want once: the binaries", n)
	}

	// The gateway is built with the toolchain the Makefile builds it with.
	if !strings.Contains(makefile, "ARGOCDAPI_GO := cd $(CURDIR)/argocdapi && GOTOOLCHAIN=go1.27.3 $(GO)") {
		t.Error("Makefile: the argocdapi module is not built with GOTOOLCHAIN=go1.27.3 as the image's gateway is")
	}

	// The binary the benchmarks and tests run is the one the image ships.
	if !regexp.MustCompile(`(?m)^MAIN_GO := CGO_ENABLED=0 \$\(GO\)$`).MatchString(makefile) ||
		!regexp.MustCompile(`(?m)^bin/wavecd: FORCE\n\t\$\(MAIN_GO\) build `).MatchString(makefile) {
		t.Error("Makefile: bin/wavecd is not built with CGO_ENABLED=0 as the image's binary is")
	}

	xFlag := regexp.MustCompile(`-X (` + regexp.QuoteMeta(modulePath) + `/[\w/]+\.\w+)=`)
	if diff := cmp.Diff(xTargets(xFlag, makefile), xTargets(xFlag, dockerfile)); diff != "" {
		t.Errorf("version variables stamped by the Makefile (-) and the Dockerfile (+) differ:\n%s", diff)
	}
	for _, arg := range []string{"VERSION", "COMMIT"} {
		if !strings.Contains(dockerfile, "ARG "+arg) || !strings.Contains(readFile(t, "build-image.sh"), arg+"=") {
			t.Errorf("build arg %s is not declared in the Dockerfile or not passed by build-image.sh", arg)
		}
	}
}

func xTargets(re *regexp.Regexp, text string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// TestDockerignoreKeepsSources: every folder holding a package the binary
// is built from is in the build context.
func TestDockerignoreKeepsSources(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.Module}} {{.ImportPath}}", "../cmd/wavecd").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	needed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		mod, pkg, _ := strings.Cut(line, " ")
		if mod != modulePath || !strings.HasPrefix(pkg, modulePath+"/") {
			continue
		}
		top, _, _ := strings.Cut(strings.TrimPrefix(pkg, modulePath+"/"), "/")
		needed[top+"/"] = true
	}
	if len(needed) == 0 {
		t.Fatal("go list found no package of the module")
	}
	kept := map[string]bool{}
	lines := strings.Split(readFile(t, "../.dockerignore"), "\n")
	if !slices.Contains(lines, "*") {
		t.Fatal(".dockerignore does not start from an empty context (*)")
	}
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "!"); ok {
			kept[rest] = true
		}
	}
	for _, f := range append(keys(needed), "go.mod", "go.sum") {
		if !kept[f] {
			t.Errorf(".dockerignore leaves %s out of the build context", f)
		}
	}
}
