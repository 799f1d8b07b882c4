/**
 * The base of every error the gateway throws on purpose. Its `code` is stable: code that
 * handles an error branches on it, tests assert it, and the message stays free to say in
 * words what failed and what to do next. Each layer's errors extend this with a closed set of
 * codes of their own; anything else that reaches a handler is a bug, logged as such.
 */
export class GatehouseError<Code extends string = string> extends Error {
  constructor(readonly code: Code, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Whether `error` is one of the gateway's own errors with this code. */
export function hasErrorCode<Code extends string>(
  error: unknown,
  code: Code,
): error is GatehouseError<Code> {
  return error instanceof GatehouseError && error.code === code;
}
