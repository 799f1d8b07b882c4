/**
 * The spans of one client request, when tracing is on (observability/tracing.ts): the MCP span
 * (SERVER kind) from the moment the session takes the request to its outcome, and its round
 * trip to the backend (CLIENT kind). Names and attributes follow the OpenTelemetry semantic
 * conventions for MCP (gen-ai/mcp.md, development status): `tools/call echo`,
 * `mcp.method.name`, `gen_ai.tool.name`, `error.type`…, plus the gateway's own `gatehouse.*`.
 *
 * Parent: the client's `params._meta.traceparent` when it sent one (SEP-414; the HTTP span is
 * then linked), else Deno's HTTP server span, which continues the `traceparent` header. The
 * backend gets the round trip's span as its parent in `params._meta.traceparent`, whatever the
 * client put there (its trace goes on through the gateway); `tracestate` and `baggage` pass as
 * the client sent them.
 *
 * Never in an attribute: arguments, results, tokens, the person's email.
 */
import type { ServerConfig } from "../../config/types.ts";
import type { Principal } from "../../core/principal.ts";
import { parseTraceparent, saneTracestate } from "../../observability/trace_context.ts";
import { type Attributes, TracedCall, TRACING } from "../../observability/tracing.ts";
import type { RpcRequest } from "../protocol/jsonrpc.ts";

/** Whose requests these are, as the audit trail names them, and the server's configuration. */
export interface TraceSubject {
  session: string;
  server: string;
  principal: Principal;
  /** Which transport reaches the backend, and where: the backend span's attributes. */
  config?: ServerConfig;
}

/** A tool or prompt name fit for a span name (SEP-986's characters); others stay attributes. */
const LOW_CARDINALITY_NAME = /^[A-Za-z0-9_.\/-]{1,128}$/;
const URI_METHODS = new Set(["resources/read", "resources/subscribe", "resources/unsubscribe"]);

export class RequestTrace {
  readonly #call: TracedCall;
  readonly #name: string;
  readonly #target: Attributes;
  readonly #subject: TraceSubject;

  constructor(request: RpcRequest, subject: TraceSubject) {
    const { method, params } = request;
    const meta = params?._meta as Record<string, unknown> | undefined;
    const name = typeof params?.name === "string" ? params.name.slice(0, 256) : undefined;
    this.#target = { "mcp.method.name": method };
    if (method === "tools/call" && name !== undefined) {
      this.#target["gen_ai.tool.name"] = name;
    } else if (method === "prompts/get" && name !== undefined) {
      this.#target["gen_ai.prompt.name"] = name;
    } else if (URI_METHODS.has(method) && typeof params?.uri === "string") {
      this.#target["mcp.resource.uri"] = withoutSecrets(params.uri);
    }
    const named = name !== undefined && (method === "tools/call" || method === "prompts/get") &&
      LOW_CARDINALITY_NAME.test(name);
    this.#name = named ? `${method} ${name}` : method;
    this.#subject = subject;
    const { principal } = subject;
    this.#call = new TracedCall(
      this.#name,
      {
        ...this.#target,
        ...(method === "tools/call" && { "gen_ai.operation.name": "execute_tool" }),
        "jsonrpc.request.id": String(request.id),
        "mcp.session.id": subject.session,
        "enduser.id": principal.id,
        ...(principal.clientId !== undefined && { "gatehouse.client_id": principal.clientId }),
        "gatehouse.server": subject.server,
      },
      parseTraceparent(meta?.traceparent),
      saneTracestate(meta?.tracestate),
    );
  }

  /**
   * Starts the backend round trip and hands `send` the request as the backend gets it: the
   * round trip's span in `params._meta.traceparent`, and current while `send` runs (the HTTP
   * client puts it in the `traceparent` header).
   */
  send<T>(request: RpcRequest, send: (message: RpcRequest) => T): T {
    // Few attributes on purpose (each costs CPU in Deno's exporter): the call's span has the rest.
    const traceparent = this.#call.startClient(this.#name, {
      ...this.#target,
      ...backendAttributes(this.#subject.config),
    });
    const params = request.params ?? {};
    const meta = params._meta as Record<string, unknown> | undefined;
    return this.#call.run(send, {
      ...request,
      params: { ...params, _meta: { ...meta, traceparent } },
    });
  }

  /** The request's outcome, as the audit trail words it (`ok`, `tool_error`, `error`…). */
  end(outcome: string, errorCode?: number): void {
    const attributes: Attributes = { "gatehouse.outcome": outcome };
    if (errorCode !== undefined) attributes["rpc.response.status_code"] = String(errorCode);
    // error.type: the JSON-RPC code as text, `tool_error` for an isError result (semconv).
    const errorType = outcome === "ok"
      ? undefined
      : outcome === "error" && errorCode !== undefined
      ? String(errorCode)
      : outcome;
    this.#call.end(attributes, errorType);
  }
}

/** The trace of `request`, or undefined (and nothing made) when tracing is off. */
export function traceRequest(request: RpcRequest, subject: TraceSubject): RequestTrace | undefined {
  return TRACING ? new RequestTrace(request, subject) : undefined;
}

/** Worked out once per server configuration. */
const backendAttributesOf = new WeakMap<ServerConfig, Attributes>();

function backendAttributes(config: ServerConfig | undefined): Attributes {
  if (!config) return {};
  let attributes = backendAttributesOf.get(config);
  if (attributes) return attributes;
  attributes = { "gatehouse.backend.transport": config.transport };
  if (config.transport === "stdio") attributes["network.transport"] = "pipe";
  else if (config.transport !== "aggregate") {
    attributes["network.transport"] = "tcp";
    // The configured host and port only: a path or query may be filled from the person.
    try {
      const url = new URL(config.url);
      if (!/[{}%]/.test(url.host)) {
        attributes["server.address"] = url.hostname;
        attributes["server.port"] = Number(url.port || (url.protocol === "https:" ? 443 : 80));
      }
    } catch { /* a URL with placeholders in its host: no address */ }
  }
  backendAttributesOf.set(config, attributes);
  return attributes;
}

/** A resource URI without what may be a credential in it: user info, query, fragment. */
function withoutSecrets(uri: string): string {
  return uri.slice(0, 512).replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, "$1").replace(
    /[?#].*$/s,
    "",
  );
}
