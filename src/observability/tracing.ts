/**
 * Traces, through Deno's built-in OpenTelemetry (docs/observability.md). Deno exports over
 * OTLP as the standard `OTEL_*` variables say and makes the HTTP server span of each request
 * (continuing the client's `traceparent` header); the gateway adds its own spans here through
 * npm:@opentelemetry/api, which Deno wires to its tracer.
 *
 * Off is the default and costs nothing per call: whether tracing is on is decided once, when
 * this module loads, and every entry point below returns at once when it is off (no span, no
 * allocation, no closure). Callers on the hot path test `TRACING` themselves before building
 * anything for a span.
 *
 * What goes into attributes is the caller's choice and never a secret: no token, cookie,
 * authorization code or tool argument (tests/tracing_test.ts looks for them).
 */
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  createTraceState,
  isSpanContextValid,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { formatTraceparent, type TraceParent } from "./trace_context.ts";

export type { Attributes };

/**
 * True when Deno's tracer is the one the API hands out: `OTEL_DENO=true` (or
 * `OTEL_DENO_TRACING=true`) and not `OTEL_SDK_DISABLED=true`. Asking the API rather than
 * reading the variables follows Deno's own rules for them, whatever they become.
 */
export const TRACING: boolean = (() => {
  const telemetry = (Deno as unknown as { telemetry?: { tracerProvider?: unknown } }).telemetry;
  return telemetry?.tracerProvider !== undefined &&
    trace.getTracerProvider() === telemetry.tracerProvider;
})();

const tracer = trace.getTracer("gatehouse");
/** The backend span's trace context as text, kept where `withTraceHeaders` finds it ready. */
const TRACEPARENT = createContextKey("gatehouse.traceparent");
const TRACESTATE = createContextKey("gatehouse.tracestate");

/**
 * A call the gateway serves (a SERVER span) and passes on to a backend (a CLIENT span, its
 * child). Made only when `TRACING`.
 */
export class TracedCall {
  readonly #server: Span;
  readonly #context: Context;
  #client?: Span;
  #clientContext?: Context;
  readonly #state?: string;
  #ended = false;

  /**
   * A child of `remoteParent` when the caller's message names one (linked to the span current
   * here, Deno's HTTP server span), else a child of the span current here.
   */
  constructor(
    name: string,
    attributes: Attributes,
    remoteParent?: TraceParent,
    remoteState?: string,
  ) {
    const here = context.active();
    this.#state = remoteState;
    let parent = here;
    let links: Link[] | undefined;
    if (remoteParent) {
      parent = trace.setSpanContext(here, {
        ...remoteParent,
        isRemote: true,
        traceState: remoteState === undefined ? undefined : createTraceState(remoteState),
      });
      const ambient = trace.getSpanContext(here);
      if (ambient && isSpanContextValid(ambient)) links = [{ context: ambient }];
    }
    this.#server = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes, links }, parent);
    this.#context = trace.setSpan(parent, this.#server);
  }

  /** Starts the round trip to the backend; returns the `traceparent` the backend should see. */
  startClient(name: string, attributes: Attributes): string {
    this.#client?.end();
    this.#client = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, this.#context);
    const traceparent = formatTraceparent(this.#client.spanContext());
    let clientContext = trace.setSpan(this.#context, this.#client).setValue(
      TRACEPARENT,
      traceparent,
    );
    if (this.#state !== undefined) clientContext = clientContext.setValue(TRACESTATE, this.#state);
    this.#clientContext = clientContext;
    return traceparent;
  }

  /**
   * Runs `send(message)` with the backend span current, so what it sends over HTTP carries
   * that span in its `traceparent` header (`withTraceHeaders`).
   */
  run<A, T>(send: (message: A) => T, message: A): T {
    return context.with(this.#clientContext ?? this.#context, send, undefined, message);
  }

  /**
   * Ends the backend span and the call's span, once; `attributes` go on the call's span.
   * `errorType` (error.type) marks a failure: both spans get status ERROR with it as the
   * description (never the backend's own words, which may quote a call's arguments).
   */
  end(attributes: Attributes, errorType?: string): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#client) finish(this.#client, errorType);
    this.#server.setAttributes(attributes);
    finish(this.#server, errorType);
  }
}

function finish(span: Span, errorType: string | undefined): void {
  if (errorType !== undefined) {
    span.setAttribute("error.type", errorType);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
  }
  span.end();
}

/**
 * `init` with the current span's `traceparent` (and `tracestate`) headers set, replacing any
 * already there, so a backend gets exactly one; `init` itself when tracing is off or no span
 * is current. For the gateway's own HTTP client, which Deno's fetch instrumentation never sees.
 */
export function withTraceHeaders(init: RequestInit | undefined): RequestInit | undefined {
  if (!TRACING) return init;
  const active = context.active();
  let traceparent = active.getValue(TRACEPARENT) as string | undefined;
  let state = active.getValue(TRACESTATE) as string | undefined;
  if (traceparent === undefined) {
    const current = trace.getSpanContext(active);
    if (!current || !isSpanContextValid(current)) return init;
    traceparent = formatTraceparent(current);
    state = current.traceState?.serialize();
  }
  // The gateway's callers build a fresh Headers per request (the SDK's transports,
  // connect.ts): set in place rather than copied, which costs more than the rest of this.
  const given = init?.headers;
  const headers = given instanceof Headers ? given : new Headers(given);
  headers.set("traceparent", traceparent);
  if (state) headers.set("tracestate", state);
  else headers.delete("tracestate");
  return headers === given ? init : { ...init, headers };
}

/**
 * Names the current HTTP server span (Deno's) after its route, `POST /token`, and sets
 * `http.route`; for routes the gateway knows, so names stay few.
 */
export function nameHttpSpan(method: string, route: string | undefined): void {
  if (!TRACING || route === undefined) return;
  const span = trace.getActiveSpan();
  if (!span) return;
  span.updateName(`${method} ${route}`);
  span.setAttribute("http.route", route);
}

/** Adds one attribute to the current HTTP server span (an OAuth error code, say). */
export function noteOnHttpSpan(key: string, value: string): void {
  if (!TRACING) return;
  trace.getActiveSpan()?.setAttribute(key, value);
}
