package source

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
)

// OCI media types of Argo CD's OCI sources.
const (
	helmConfigMediaType = "application/vnd.cncf.helm.config.v1+json"
	helmLayerMediaType  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
	// maxOCILayers guards against artifacts with absurd layer counts, as
	// Argo CD does.
	maxOCILayers = 10
	// maxOCIManifest bounds an image manifest.
	maxOCIManifest = 4 << 20
	// defaultMaxArtifact is Argo CD's default cap on an extracted artifact.
	defaultMaxArtifact = 1 << 30
	// maxArtifactTrees bounds the extracted artifacts kept in memory.
	maxArtifactTrees = 32
)

// allowedLayerTypes are the content layers Argo CD accepts by default.
var allowedLayerTypes = []string{"application/vnd.oci.image.layer.v1.tar", "application/vnd.oci.image.layer.v1.tar+gzip", helmLayerMediaType}

// Artifact returns the files of the OCI artifact repoURL
// (oci://registry/repository) at revision, a tag, a digest or a semver
// constraint over the tags, as Argo CD 3.1 reads OCI sources: exactly one
// content layer (a tar or tar.gz; a Helm chart's layer is unpacked from
// its single folder), at most 10 layers, at most 1 GiB unpacked. The
// tree's revision is the artifact's digest; trees are cached by digest. A
// mirror of repoURL serves a local folder instead.
func (c *Charts) Artifact(ctx context.Context, repoURL, revision string) (*Tree, error) {
	if dir, ok := c.opts.Mirrors.Lookup(repoURL); ok {
		return ReadDir(ctx, dir)
	}
	ref := strings.TrimSuffix(strings.TrimPrefix(repoURL, "oci://"), "/")
	repo, err := c.ociRepository(repoURL, ref)
	if err != nil {
		return nil, err
	}
	desc, err := resolveArtifact(ctx, repo, revision)
	if err != nil {
		return nil, fmt.Errorf("oci artifact %s: %w", RedactURL(repoURL), err)
	}
	key := NormalizeURL(repoURL) + "@" + desc.Digest.String()
	if t, ok := c.artifactTrees.get(key); ok {
		return t, nil
	}
	t, err := c.extractArtifact(ctx, repo, desc)
	if err != nil {
		return nil, fmt.Errorf("oci artifact %s@%s: %w", RedactURL(repoURL), desc.Digest, err)
	}
	c.artifactTrees.put(key, t)
	return t, nil
}

func (c *Charts) ociRepository(repoURL, ref string) (*remote.Repository, error) {
	repo, err := remote.NewRepository(ref)
	if err != nil {
		return nil, fmt.Errorf("oci artifact %s: %w", RedactURL(repoURL), err)
	}
	client := &auth.Client{Client: c.opts.HTTPClient, Cache: auth.NewCache()}
	client.SetUserAgent("wavecd")
	cred := c.credentials(repoURL)
	if cred != nil && (cred.Username != "" || cred.Password != "") {
		client.Credential = auth.StaticCredential(repo.Reference.Registry, auth.Credential{Username: cred.Username, Password: cred.Password})
	}
	repo.Client = client
	repo.PlainHTTP = c.opts.PlainHTTPRegistries || (cred != nil && cred.InsecureOCIForceHTTP)
	return repo, nil
}

// resolveArtifact resolves a tag or digest, else the newest tag matching a
// semver constraint.
func resolveArtifact(ctx context.Context, repo *remote.Repository, revision string) (ocispec.Descriptor, error) {
	if revision == "" {
		revision = "latest"
	}
	desc, err := repo.Resolve(ctx, revision)
	if err == nil {
		return desc, nil
	}
	cons, cerr := semver.NewConstraint(revision)
	if cerr != nil || strings.HasPrefix(revision, "sha256:") {
		return ocispec.Descriptor{}, fmt.Errorf("resolve %q: %w", revision, err)
	}
	var best *semver.Version
	bestTag := ""
	err = repo.Tags(ctx, "", func(tags []string) error {
		for _, t := range tags {
			v, err := semver.NewVersion(t)
			if err == nil && cons.Check(v) && (best == nil || v.GreaterThan(best)) {
				best, bestTag = v, t
			}
		}
		return nil
	})
	if err != nil {
		return ocispec.Descriptor{}, fmt.Errorf("list tags: %w", err)
	}
	if best == nil {
		return ocispec.Descriptor{}, fmt.Errorf("no tag matches %q", revision)
	}
	return repo.Resolve(ctx, bestTag)
}

func (c *Charts) extractArtifact(ctx context.Context, repo *remote.Repository, desc ocispec.Descriptor) (*Tree, error) {
	if desc.MediaType != ocispec.MediaTypeImageManifest && desc.MediaType != "application/vnd.docker.distribution.manifest.v2+json" {
		return nil, fmt.Errorf("media type %s is not an image manifest", desc.MediaType)
	}
	rc, err := repo.Fetch(ctx, desc)
	if err != nil {
		return nil, fmt.Errorf("fetch manifest: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxOCIManifest))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("fetch manifest: %w", err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	layer, err := contentLayer(&m)
	if err != nil {
		return nil, err
	}
	blob, err := repo.Blobs().Fetch(ctx, layer)
	if err != nil {
		return nil, fmt.Errorf("fetch layer %s: %w", layer.Digest, err)
	}
	defer blob.Close()
	files, err := untarLayer(ctx, blob, layer.MediaType, c.opts.maxArtifact())
	if err != nil {
		return nil, fmt.Errorf("layer %s: %w", layer.Digest, err)
	}
	if m.Config.MediaType == helmConfigMediaType {
		if files, err = chartFolderContents(files); err != nil {
			return nil, err
		}
	}
	return memoryTree(desc.Digest.String(), files), nil
}

// contentLayer picks the one content layer of m, as Argo CD does: for a
// Helm chart its chart layer, else the one tar or tar.gz layer; other
// layers (provenance, attestations) are skipped.
func contentLayer(m *ocispec.Manifest) (ocispec.Descriptor, error) {
	if len(m.Layers) > maxOCILayers {
		return ocispec.Descriptor{}, fmt.Errorf("expected no more than %d oci layers, got %d", maxOCILayers, len(m.Layers))
	}
	helm := m.Config.MediaType == helmConfigMediaType
	var found []ocispec.Descriptor
	for _, l := range m.Layers {
		isContent := strings.HasSuffix(l.MediaType, "tar+gzip") || strings.HasSuffix(l.MediaType, "tar.gzip") || strings.HasSuffix(l.MediaType, "tar")
		if helm && l.MediaType != helmLayerMediaType || !isContent {
			continue
		}
		if !slices.Contains(allowedLayerTypes, l.MediaType) {
			return ocispec.Descriptor{}, fmt.Errorf("oci layer media type %s is not in the list of allowed media types", l.MediaType)
		}
		found = append(found, l)
	}
	if len(found) != 1 {
		return ocispec.Descriptor{}, fmt.Errorf("expected only a single oci content layer, got %d", len(found))
	}
	return found[0], nil
}

// memFile is one entry of an unpacked layer.
type memFile struct {
	entry *entry
	data  []byte
}

// untarLayer unpacks a tar (gzip-compressed unless the media type ends in
// "tar") into memory, refusing names that leave the root and more than
// max bytes.
func untarLayer(ctx context.Context, r io.Reader, mediaType string, max int64) (map[string]*memFile, error) {
	if !strings.HasSuffix(mediaType, "tar") {
		gz, err := gzip.NewReader(r)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		r = gz
	}
	tr := tar.NewReader(r)
	files := map[string]*memFile{}
	var total int64
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		name, err := Join(".", h.Name, JoinOptions{})
		if err != nil {
			return nil, err
		}
		if name == "." {
			continue
		}
		switch h.Typeflag {
		case tar.TypeDir:
			files[name] = &memFile{entry: &entry{kind: kindDir}}
		case tar.TypeSymlink:
			files[name] = &memFile{entry: &entry{kind: kindSymlink, target: h.Linkname}}
		case tar.TypeReg:
			total += h.Size
			if total > max {
				return nil, fmt.Errorf("more than %d bytes unpacked", max)
			}
			data, err := io.ReadAll(io.LimitReader(tr, h.Size))
			if err != nil {
				return nil, err
			}
			files[name] = &memFile{entry: &entry{kind: kindFile, size: int64(len(data)), key: name, exec: h.Mode&0o111 != 0}, data: data}
		}
	}
}

// chartFolderContents moves the files of a chart layer's single folder to
// the root.
func chartFolderContents(files map[string]*memFile) (map[string]*memFile, error) {
	tops := map[string]bool{}
	for name := range files {
		top, _, _ := strings.Cut(name, "/")
		tops[top] = true
	}
	if len(tops) != 1 {
		return nil, fmt.Errorf("expected 1 directory in the chart layer, found %d entries", len(tops))
	}
	out := map[string]*memFile{}
	for name, f := range files {
		if _, rest, ok := strings.Cut(name, "/"); ok {
			if f.entry.kind == kindFile {
				f.entry.key = rest
			}
			out[rest] = f
		}
	}
	return out, nil
}

// memoryTree builds a Tree over unpacked files.
func memoryTree(revision string, files map[string]*memFile) *Tree {
	entries := make(map[string]*entry, len(files))
	content := make(map[string][]byte, len(files))
	for name, f := range files {
		entries[path.Clean(name)] = f.entry
		if f.entry.kind == kindFile {
			content[f.entry.key] = f.data
		}
	}
	return newTree(revision, entries, func(e *entry) ([]byte, error) {
		data, ok := content[e.key]
		if !ok {
			return nil, errors.New("no content")
		}
		return data, nil
	})
}
