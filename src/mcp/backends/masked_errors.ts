/**
 * An HTTP backend whose errors may quote what it answered (an error page echoing the request's
 * `Authorization`, say): every error it raises has the known secrets masked before anyone logs
 * it or shows it to the client. Stdio backends mask their own output (stdio.ts).
 */
import type { SecretMask } from "../../observability/mask.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import { DelegatingTransport } from "./delegating.ts";

export class MaskedErrors extends DelegatingTransport {
  #onerror: Transport["onerror"];

  constructor(inner: Transport, private readonly mask: SecretMask) {
    super(inner);
    inner.onerror = (error) => this.#onerror?.(mask.maskError(error));
  }

  override get onerror(): Transport["onerror"] {
    return this.#onerror;
  }
  override set onerror(handler: Transport["onerror"]) {
    this.#onerror = handler;
  }

  override start(): Promise<void> {
    return this.inner.start().catch((error) => Promise.reject(this.mask.maskError(error)));
  }

  override send(message: JSONRPCMessage, options?: Parameters<Transport["send"]>[1]) {
    return this.inner.send(message, options).catch((error) =>
      Promise.reject(this.mask.maskError(error))
    );
  }
}
