/**
 * What a shared process asks of clients (elicitation, sampling, roots; shared_process.ts):
 * given to the session of the one call in flight that may take input (tools/call, prompts/get,
 * resources/read), as on a stateless link, and only when that session's client declared the
 * capability; refused otherwise, never guessed. A session may answer only what it was asked.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  errorResponse,
  idKey,
  type RequestId,
  RpcErrorCode,
  type RpcNotification,
  type RpcRequest,
} from "../protocol/jsonrpc.ts";
import type { ProcessPort } from "./process_port.ts";
import { type CallInFlight, whyNotAttributed } from "./shared_attribution.ts";

/** The client capability each request of the process needs. */
const NEEDS: Record<string, string> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

export class SharedInputs {
  /** The process's requests waiting for a session's answer, by id. */
  readonly #asked = new Map<string, { port: ProcessPort; id: RequestId }>();
  /** URL elicitations under way, by their elicitationId: whose completion is whose. */
  readonly #elicitations = new Map<string, ProcessPort>();

  constructor(
    private readonly toProcess: (message: JSONRPCMessage) => Promise<void>,
    private readonly everyone: boolean,
    private readonly forwardRoots: boolean,
  ) {}

  /** The process asked; `takers` are the calls in flight that may take input. */
  asked(request: RpcRequest, takers: readonly CallInFlight[]): void {
    if (request.method === "ping") {
      return this.#reply({ jsonrpc: "2.0", id: request.id, result: {} });
    }
    const why = this.#refusal(request, takers);
    if (why !== undefined) {
      return this.#reply(
        errorResponse(request.id, RpcErrorCode.methodNotFound, `${request.method}: ${why}`),
      );
    }
    const port = takers[0].port;
    this.#asked.set(idKey(request.id), { port, id: request.id });
    const elicitationId = request.params?.elicitationId;
    if (request.method === "elicitation/create" && typeof elicitationId === "string") {
      this.#elicitations.set(elicitationId, port);
    }
    port.deliver(request as JSONRPCMessage);
  }

  /** Whether `port` may send this answer on (it was the session asked); forgets the question. */
  answeredBy(port: ProcessPort, id: RequestId): boolean {
    const key = idKey(id);
    if (this.#asked.get(key)?.port !== port) return false;
    this.#asked.delete(key);
    return true;
  }

  /** The process withdrew a question (notifications/cancelled): only its session hears it. */
  withdrawn(notification: RpcNotification): void {
    const id = notification.params?.requestId as RequestId | undefined;
    if (id === undefined) return;
    const asked = this.#asked.get(idKey(id));
    this.#asked.delete(idKey(id));
    asked?.port.deliver(notification as JSONRPCMessage);
  }

  /** A URL elicitation finished: only the session it was asked of hears it. */
  completed(notification: RpcNotification): void {
    const id = notification.params?.elicitationId;
    const port = typeof id === "string" ? this.#elicitations.get(id) : undefined;
    if (port === undefined) return;
    this.#elicitations.delete(id as string);
    port.deliver(notification as JSONRPCMessage);
  }

  /** `port`'s session left: what it was asked is refused to the process. */
  forget(port: ProcessPort): void {
    for (const [id, asked] of [...this.#elicitations]) {
      if (asked === port) this.#elicitations.delete(id);
    }
    for (const [key, asked] of [...this.#asked]) {
      if (asked.port !== port) continue;
      this.#asked.delete(key);
      this.#reply(errorResponse(asked.id, RpcErrorCode.backendError, "the client session ended"));
    }
  }

  #refusal(request: RpcRequest, takers: readonly CallInFlight[]): string | undefined {
    const capability = NEEDS[request.method];
    if (capability === undefined) {
      return "the gateway does not relay this request from a shared process";
    }
    if (capability === "roots" && (this.everyone || !this.forwardRoots)) {
      return "a process shared by everyone never learns one person's roots";
    }
    const unattributed = whyNotAttributed(takers, this.everyone);
    if (unattributed !== undefined) return unattributed;
    if (takers[0].port.clientCapabilities[capability] === undefined) {
      return `the client of the request waiting did not declare the ${capability} capability`;
    }
    return undefined;
  }

  #reply(message: JSONRPCMessage): void {
    this.toProcess(message).catch(() => {});
  }
}
