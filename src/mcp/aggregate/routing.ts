/**
 * Calls from the client to the member that owns them: a tool or prompt by its namespaced name
 * (sent on under the member's own name), a resource or completion by URI or prompt, the
 * logging level to every member that logs; and the client's cancellation of a call in flight.
 */
import { idKey, type RequestId, RpcErrorCode, type RpcRequest } from "../protocol/jsonrpc.ts";
import type { Discovery } from "./discovery.ts";
import { MemberError, type MemberLink } from "./member.ts";
import type { Members } from "./members.ts";

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
    const route = await discovery.route(kind, name);
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

  /** resources/read, subscribe, unsubscribe: the member that listed the URI or its template. */
  async byUri(
    request: RpcRequest,
    params: Record<string, unknown>,
    uri: unknown,
  ): Promise<Record<string, unknown>> {
    const link = await this.options.discovery.ownerOfUri(uri);
    if (!link) {
      throw new MemberError(
        RpcErrorCode.invalidParams,
        `no member of this aggregate serves the resource ${String(uri).slice(0, 200)}`,
      );
    }
    return await this.#forward(request, link, params);
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
    return await this.byUri(request, params, ref.uri);
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
