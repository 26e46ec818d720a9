# syntax=docker/dockerfile:1
# The wavecd image: the static wavecd binary on distroless, as user 65532,
# with the gateway that serves Argo CD's gRPC API beside it
# (wavecd-argocd-api, which wavecd server runs: --argocd-api auto).
# Build it with `make image` (it passes VERSION and COMMIT as `make build`
# stamps them); deploy/deploy_test.go checks this file against the Makefile.

# The builder runs natively and cross-compiles for the target platform.
# hadolint ignore=DL3029
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
COPY argocdapi/go.mod argocdapi/go.sum ./argocdapi/
# The argocdapi module needs Argo CD's Go, 1.27: the toolchain comes from
# the Go module proxy.
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download && \
    cd argocdapi && GOTOOLCHAIN=go1.27.3 go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath \
      -ldflags "-s -w -X github.com/wavecd/wavecd/internal/buildinfo.Version=${VERSION} -X github.com/wavecd/wavecd/internal/buildinfo.Commit=${COMMIT}" \
      -o /out/wavecd ./cmd/wavecd && \
    cd argocdapi && GOTOOLCHAIN=go1.27.3 CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath -ldflags "-s -w" -o /out/wavecd-argocd-api ./cmd/wavecd-argocd-api

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/wavecd /out/wavecd-argocd-api /
USER 65532:65532
ENTRYPOINT ["/wavecd"]
