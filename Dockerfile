# syntax=docker/dockerfile:1
# The wavecd image: the static wavecd binary on distroless, as user 65532.
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
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
    go build -trimpath \
      -ldflags "-s -w -X github.com/wavecd/wavecd/internal/buildinfo.Version=${VERSION} -X github.com/wavecd/wavecd/internal/buildinfo.Commit=${COMMIT}" \
      -o /out/wavecd ./cmd/wavecd

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/wavecd /wavecd
USER 65532:65532
ENTRYPOINT ["/wavecd"]
