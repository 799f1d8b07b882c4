/**
 * Calls from the client to the member that owns them: a tool or prompt by its namespaced name
 * (sent on under the member's own name), a resource or completion by URI or prompt, the
 * logging level to every member that logs; and the client's cancellation of a call in flight.
 */
import { idKey, type RequestId, RpcErrorCode, type RpcRequest } from "../protocol/jsonrpc.ts";
import type { Discovery } from "./discovery.ts";
import { MemberError, type MemberLink } from "./member.ts";
import type { Members } from "./members.ts";
import { aggregateUiUri, isUiUri } from "../protocol/mcp_apps.ts";

export interface RouterOptions {
  members: Members;
  discovery: Discovery;
  /** How long a member may take to set its logging level. */
  discoveryTimeoutMs: number;
  /** How long a call routed to `member` may take; undefined: the session's timeout bounds it. */
  callTimeoutMs?(member: string): number | undefined;
}

export class Router {
  /** Client request id → the member request carrying it, for cancellation. */
  readonly #inflight = new Map<string, { link: MemberLink; id: number }>();

  constructor(private readonly options: RouterOptions) {}

  /** tools/call and prompts/get: the member that listed `params.name`. */
  async byName(
    request: RpcRequest,
    kind: "tools" | "prompts",
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const { members, discovery } = this.options;
    const name = String(params.name ?? "");
    const route = await discovery.route(kind, name) ??
      (kind === "tools" ? await this.#byOwnName(name) : undefined);
    if (!route) {
      // A member that is down is left out of the lists; say so rather than "unknown".
      const owner = members.ownerOf(name);
      if (owner && owner.state === "down") {
        throw members.unavailable(owner, "; it is retried shortly");
      }
      const leftOut = owner && discovery.leftOut.get(owner.name);
      if (leftOut) {
        throw new MemberError(
          RpcErrorCode.internalError,
          `the member "${owner.name}" is unavailable: ${leftOut}`,
        );
      }
      if (kind === "tools" && discovery.withheld(name)) {
        throw new MemberError(
          RpcErrorCode.invalidParams,
          `the tool ${
            JSON.stringify(name.slice(0, 200))
          } is not available to you on this server; ` +
            "list the tools to see those you may use, or ask the gateway's administrators for access",
          { reason: "tool_not_allowed" },
        );
      }
      const what = kind === "tools" ? "tool" : "prompt";
      throw new MemberError(
        RpcErrorCode.invalidParams,
        `unknown ${what} "${name.slice(0, 200)}": list them again, a member may be unavailable`,
      );
    }
    return await this.#forward(request, members.links.get(route.member)!, {
      ...params,
      name: route.name,
    });
  }

  /**
   * A tool called by the name its member gave it, as an App (MCP Apps) calls its own server's
   * tools from inside its UI: the one member that lists it, or a refusal naming the choices when
   * several do. Only tools the caller may use are looked at.
   */
  async #byOwnName(name: string): Promise<{ member: string; name: string } | undefined> {
    const found = await this.options.discovery.toolsNamed(name);
    if (found.length <= 1) return found[0]?.route;
    const listed = found.map((f) => f.listed);
    throw new MemberError(
      RpcErrorCode.invalidParams,
      `the tool "${name.slice(0, 200)}" is offered by ${found.length} members of this aggregate (${
        listed.slice(0, 5).join(", ")
      }): call it by one of those names`,
      { reason: "ambiguous_tool", tools: listed.slice(0, 20) },
    );
  }

  /**
   * resources/read, subscribe, unsubscribe: the member that owns the URI (its `ui://` name, its
   * listing or its template), sent the URI as it knows it; what it reads back is named as the
   * aggregate names it.
   */
  async byUri(
    request: RpcRequest,
    params: Record<string, unknown>,
    uri: unknown,
    withUri: (uri: string) => Record<string, unknown> = (own) => ({ ...params, uri: own }),
  ): Promise<Record<string, unknown>> {
    const owner = await this.options.discovery.ownerOfUri(uri);
    if (owner === "withheld") {
      throw new MemberError(
        RpcErrorCode.invalidParams,
        `the resource ${
          String(uri).slice(0, 200)
        } is the interface of a tool that is not available to you on this server`,
        { reason: "tool_not_allowed" },
      );
    }
    if (!owner) {
      throw new MemberError(
        RpcErrorCode.invalidParams,
        `no member of this aggregate serves the resource ${String(uri).slice(0, 200)}`,
      );
    }
    const result = await this.#forward(request, owner.link, withUri(owner.uri));
    return request.method === "resources/read" && isUiUri(owner.uri)
      ? namedByAggregate(owner.link.name, result)
      : result;
  }

  /** completion/complete: the member of the prompt or resource being completed. */
  async complete(
    request: RpcRequest,
    params: Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const ref = (params.ref ?? {}) as Record<string, unknown>;
    if (ref.type === "ref/prompt") {
      const route = await this.options.discovery.route("prompts", String(ref.name ?? ""));
      if (!route) {
        throw new MemberError(
          RpcErrorCode.invalidParams,
          `unknown prompt "${String(ref.name).slice(0, 200)}"`,
        );
      }
      return await this.#forward(request, this.options.members.links.get(route.member)!, {
        ...params,
        ref: { ...ref, name: route.name },
      });
    }
    return await this.byUri(
      request,
      params,
      ref.uri,
      (uri) => ({ ...params, ref: { ...ref, uri } }),
    );
  }

  /** logging/setLevel: every connected member that logs; one that fails does not matter. */
  async setLevel(params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const targets = [...this.options.members.links.values()].filter((l) =>
      l.state === "ready" && l.info?.capabilities.logging
    );
    await Promise.allSettled(
      targets.map((link) =>
        link.request("logging/setLevel", params, this.options.discoveryTimeoutMs)
      ),
    );
    return {};
  }

  /** The client's notifications/cancelled: tells the member and stops waiting for it. */
  cancelled(params: Record<string, unknown> | undefined): void {
    const requestId = params?.requestId as RequestId | undefined;
    const inflight = requestId === undefined ? undefined : this.#inflight.get(idKey(requestId));
    if (!inflight) return;
    inflight.link.notify("notifications/cancelled", { ...params, requestId: inflight.id });
    inflight.link.cancel(inflight.id, "cancelled by the client");
  }

  async #forward(request: RpcRequest, link: MemberLink, params: Record<string, unknown>) {
    await this.options.members.ensure(link);
    const started = link.start(
      request.method,
      params,
      this.options.callTimeoutMs?.(link.name),
    );
    const key = idKey(request.id);
    this.#inflight.set(key, { link, id: started.id });
    try {
      return await started.result;
    } finally {
      this.#inflight.delete(key);
    }
  }
}

/** A member's resources/read result with its `ui://` contents named as the aggregate names them. */
function namedByAggregate(
  member: string,
  result: Record<string, unknown>,
): Record<string, unknown> {
  if (!Array.isArray(result.contents)) return result;
  return {
    ...result,
    contents: result.contents.map((content) =>
      content && typeof content === "object" && isUiUri((content as { uri?: unknown }).uri)
        ? { ...content, uri: aggregateUiUri(member, (content as { uri: string }).uri) }
        : content
    ),
  };
}
