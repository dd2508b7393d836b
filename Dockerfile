# Boris over streamable HTTP in a container. Two stages: build the static binary with
# scripts/build-static.sh (the same one CI runs in an empty root), then copy it into a
# small image with what the bash tool needs: bash, git, coreutils. No ripgrep: Boris
# searches in-process.
#
#   docker build -t boris .
#   docker run --rm -p 127.0.0.1:8080:8080 -v "$PWD:/workspace" boris
#
# The token is generated at each start and printed on the container's stderr
# (`docker logs`: a pipe, which no command in the container can read back; were stderr a
# file, the token would go to a file the sandbox hides, and the log would say where);
# pass BORIS_TOKEN to choose it instead.

FROM rust:1-bookworm AS build
RUN rustup target add "$(uname -m)-unknown-linux-musl"
WORKDIR /src
COPY . .
RUN scripts/build-static.sh --out /out

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends bash git coreutils ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/boris /usr/local/bin/boris
# Every flag has a BORIS_* twin; these are the container's defaults. Listening beyond
# loopback inside the container is needed for -p to reach it.
ENV BORIS_TRANSPORT=http \
    BORIS_HOST=0.0.0.0 \
    BORIS_PORT=8080 \
    BORIS_WORKDIR=/workspace
WORKDIR /workspace
EXPOSE 8080
# /health answers without the token. bash's /dev/tcp: no curl in the image.
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s --retries=3 \
    CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /health HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3 && grep -q '\"ok\"' <&3"]
ENTRYPOINT ["boris"]
CMD ["--generate-token"]
