/**
 * Requests that reach a 2026-07-28 backend as their 2026-07-28 client sent them. A stateless
 * client's request travels through its person's link (a session at the gateway, for limits,
 * timeouts, the audit trail and a child of the person's own); when the backend speaks 2026
 * too, nothing of it needs translating, so the link marks it here and the backend sends it on
 * with its own `_meta` envelope and hands the answer back as the backend wrote it
 * (`input_required` included: the front seals its `requestState`). The mark is held by the
 * message object, not written into it, so no client can claim it for a message of its own.
 */
const passing = new WeakSet<object>();

/** Marks `request` (the very object the link sends) to pass as it is. */
export function passAsItIs<T extends object>(request: T): T {
  passing.add(request);
  return request;
}

/** True for a request marked by `passAsItIs`. */
export function passesAsItIs(request: object): boolean {
  return passing.has(request);
}
