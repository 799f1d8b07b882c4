# Gatehouse on the official Deno image, as the image's non-root user.
#   docker build -t gatehouse .
#   docker run -p 8080:8080 -v $PWD/config.yaml:/etc/gatehouse/config.yaml:ro \
#     -v gatehouse-data:/var/lib/gatehouse --env-file gatehouse.env gatehouse
# The configuration must listen on 0.0.0.0:8080 and keep storage under /var/lib/gatehouse.
FROM denoland/deno:2.9.6

RUN mkdir -p /var/lib/gatehouse /etc/gatehouse \
  && chown deno:deno /var/lib/gatehouse
WORKDIR /app
# deno.json locks the gateway's packages only, in deno.runtime.lock (scripts/runtime_lock.ts): no
# test or bench packages.
COPY --chown=deno:deno deno.json deno.runtime.lock main.ts ./
COPY --chown=deno:deno src ./src

USER deno
# Fetch and type-check every dependency at build time, none at start.
RUN deno cache --frozen main.ts

ENV GATEHOUSE_CONFIG=/etc/gatehouse/config.yaml
VOLUME ["/var/lib/gatehouse"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=6s --start-period=10s --retries=3 \
  CMD ["deno", "run", "--allow-net", "--allow-read", "--allow-env", "--no-prompt", "main.ts", "health"]
# The same permissions the compiled binary has (scripts/compile.ts).
ENTRYPOINT ["deno", "run", "--allow-net", "--allow-read", "--allow-write", "--allow-env", "--allow-run", "--no-prompt", "main.ts"]
CMD ["serve"]
