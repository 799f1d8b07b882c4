/**
 * Prometheus metrics in the text exposition format (0.0.4): counters and histograms updated as
 * things happen, and readings (sessions, processes, cache lookups) taken when scraped. Label
 * values come from the configuration or closed sets, never from requests, so the number of
 * series stays bounded.
 */

export type Labels = Record<string, string>;

/** What a scrape of `render()` is served as. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  render(): string[];
}

function labelText(labels: Labels, extra: Labels = {}): string {
  const all = { ...labels, ...extra };
  const parts = Object.entries(all).map(([key, value]) =>
    `${key}="${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`
  );
  return parts.length ? `{${parts.join(",")}}` : "";
}

/** The series key of a label set, independent of key order; called on every update, so cheap. */
function keyOf(labels: Labels): string {
  const names = Object.keys(labels);
  if (names.length > 1) names.sort();
  let key = "";
  for (const name of names) key += `${name}\u0000${labels[name]}\u0001`;
  return key;
}

export class Counter {
  readonly #values = new Map<string, { labels: Labels; value: number }>();

  constructor(readonly name: string) {}

  inc(labels: Labels = {}, by = 1): void {
    const key = keyOf(labels);
    const entry = this.#values.get(key);
    if (entry) entry.value += by;
    else this.#values.set(key, { labels, value: by });
  }

  render(): string[] {
    return [...this.#values.values()].map(({ labels, value }) =>
      `${this.name}${labelText(labels)} ${value}`
    );
  }
}

/** Seconds, from 1 ms to 60 s: where gateway and backend latencies live. */
export const LATENCY_BUCKETS = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
  60,
];

export class Histogram {
  readonly #series = new Map<
    string,
    { labels: Labels; counts: number[]; sum: number; count: number }
  >();

  constructor(readonly name: string, readonly buckets: number[] = LATENCY_BUCKETS) {}

  observe(value: number, labels: Labels = {}): void {
    const key = keyOf(labels);
    let series = this.#series.get(key);
    if (!series) {
      series = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  render(): string[] {
    const lines: string[] = [];
    for (const { labels, counts, sum, count } of this.#series.values()) {
      this.buckets.forEach((bound, i) => {
        lines.push(`${this.name}_bucket${labelText(labels, { le: String(bound) })} ${counts[i]}`);
      });
      lines.push(`${this.name}_bucket${labelText(labels, { le: "+Inf" })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${sum}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }
}

export class Metrics {
  readonly #families: Family[] = [];

  counter(name: string, help: string): Counter {
    const counter = new Counter(name);
    this.#families.push({ name, help, type: "counter", render: () => counter.render() });
    return counter;
  }

  histogram(name: string, help: string, buckets?: number[]): Histogram {
    const histogram = new Histogram(name, buckets);
    this.#families.push({ name, help, type: "histogram", render: () => histogram.render() });
    return histogram;
  }

  /** A value read when scraped: a gauge, or a counter kept elsewhere. */
  reading(
    name: string,
    help: string,
    type: "gauge" | "counter",
    read: () => [Labels, number][],
  ): void {
    this.#families.push({
      name,
      help,
      type,
      render: () => read().map(([labels, value]) => `${name}${labelText(labels)} ${value}`),
    });
  }

  render(): string {
    const lines: string[] = [];
    for (const family of this.#families) {
      lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
      lines.push(...family.render());
    }
    return lines.join("\n") + "\n";
  }
}

/** The gateway's instruments, in one place so their names and labels are seen together. */
export class GatewayMetrics {
  readonly registry = new Metrics();
  readonly httpRequests = this.registry.counter(
    "gatehouse_http_requests_total",
    "HTTP requests answered, by endpoint kind and status.",
  );
  readonly httpDuration = this.registry.histogram(
    "gatehouse_http_request_duration_seconds",
    "Time to the response head (streams excluded), by endpoint kind.",
  );
  readonly calls = this.registry.counter(
    "gatehouse_calls_total",
    "Tool calls, prompt gets and resource reads, by server and outcome.",
  );
  readonly callDuration = this.registry.histogram(
    "gatehouse_call_duration_seconds",
    "Duration of tool calls, prompt gets and resource reads, by server.",
  );
  readonly authRefusals = this.registry.counter(
    "gatehouse_auth_refusals_total",
    "MCP requests refused at authentication, by server and reason.",
  );
  readonly tokensIssued = this.registry.counter(
    "gatehouse_oauth_tokens_issued_total",
    "Access tokens issued at /token, by grant type.",
  );
  readonly tokenRefusals = this.registry.counter(
    "gatehouse_oauth_token_refusals_total",
    "Token requests refused, by OAuth error code.",
  );
  readonly slowReaderCuts = this.registry.counter(
    "gatehouse_slow_reader_cuts_total",
    "SSE streams cut because their client read too slowly (limits.maxStreamBuffer), by server.",
  );
  readonly connectionsShed = this.registry.counter(
    "gatehouse_connections_shed_total",
    "Client connections refused at once: at connections.max, or with no file descriptor left.",
  );
  readonly connectionTimeouts = this.registry.counter(
    "gatehouse_connection_timeouts_total",
    "Client connections closed by a connections: time limit (handshake, header, body, idle, send).",
  );
  readonly acmeAttempts = this.registry.counter(
    "gatehouse_acme_attempts_total",
    "Attempts to obtain a TLS certificate from the ACME directory, by outcome (obtained, failed).",
  );
  readonly tlsHandshakeFailures = this.registry.counter(
    "gatehouse_tls_handshake_failures_total",
    "TLS handshakes that failed (a client that does not trust the certificate, or spoke plain HTTP to the TLS port).",
  );
  readonly toolChanges = this.registry.counter(
    "gatehouse_tool_changes_total",
    "Tool definitions found changed or new since approved, by server (an aggregate's member), change (new, changed) and decision (allow, hold, refuse).",
  );
  readonly approvals = this.registry.counter(
    "gatehouse_approvals_total",
    "Held tool calls (approvals:), by server and outcome (requested, approved, denied, expired, executed, ended).",
  );
  readonly rateLimited = this.registry.counter(
    "gatehouse_rate_limited_total",
    "Requests refused by a rate limit, by limit.",
  );
}
