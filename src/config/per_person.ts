/**
 * The per-person rule: whether what a server's backend answers (its lists above all) can depend
 * on who asks, and why. Everything that keeps a backend's answers across people asks here and
 * nowhere else: the aggregate's discovery cache (mcp/aggregate/backend.ts) keeps such a member's
 * lists per person, and a process shared by everyone (`share: all`, server_share.ts) refuses the
 * person's values in what starts it.
 *
 * Every key a server may have is classified in `SERVER_KEY_RULES`; per_person_test.ts walks the
 * configuration schema and fails on a key that is not, so a new per-person feature (identity to
 * backends, approvals, …) cannot be forgotten: add its key here, with the reason it makes the
 * backend's answers the person's, or the reason it cannot.
 */
import type { ConfigPath } from "./issues.ts";
import type { BackendServerConfig } from "./types.ts";

/** One reason a server's answers can depend on the person. */
export interface PersonalReason {
  /** Where in the server's entry (below `servers.NAME`) the reason lies. */
  path: ConfigPath;
  /**
   * The person's own values are in what starts or reaches the backend (a placeholder, their
   * token, their identity), as opposed to state or client data the backend gathers per person:
   * a process everyone shares cannot carry these.
   */
  carried: boolean;
  /** What a person reads in `check`'s errors and the docs. */
  why: string;
}

/** How one configuration key bears on the rule. */
export type KeyRule =
  /** The key can make the answers personal: the reasons it does for this server, if any. */
  | { personal: (server: BackendServerConfig) => PersonalReason[] }
  /** The key never does: why not. */
  | { never: string };

const USER_PLACEHOLDER = /\{\{\s*user\.[^}]*\}\}/;

/** A reason for each value of `values` that names the person (`{{user.*}}`). */
function placeholders(key: string, values: string[] | Record<string, string>): PersonalReason[] {
  return Object.entries(values)
    .filter(([, text]) => USER_PLACEHOLDER.test(text))
    .map(([at, _text]) => ({
      path: Array.isArray(values) ? [key, Number(at)] : [key, at],
      carried: true,
      why: "uses {{user.*}} placeholders",
    }));
}

const NOT_A_BACKEND_INPUT = "decides who may reach the server, not what its backend answers";

/** Every key of a server's entry (all transports), and how it bears on the rule. */
export const SERVER_KEY_RULES: Record<string, KeyRule> = {
  transport: { never: "the kind of backend alone says nothing of who asks" },
  description: { never: "shown to people, never sent to the backend" },
  public: { never: NOT_A_BACKEND_INPUT },
  serviceAuths: { never: NOT_A_BACKEND_INPUT },
  access: { never: NOT_A_BACKEND_INPUT },
  tools: {
    never:
      "the gateway filters the backend's one list per person (tool_gate.ts); the backend never learns the policy",
  },
  approvals: {
    never:
      "the gateway holds a call in the caller's own session, and an approval is bound to that person, server, tool and arguments (mcp/approvals/); the backend, a shared process or an aggregate's cache only ever sees calls already approved for whoever made them",
  },
  requestTimeout: { never: "how long the gateway waits" },
  command: { never: "placeholders are not filled in the command" },
  cwd: { never: "placeholders are not filled in the working directory" },
  args: {
    personal: (s) => s.transport === "stdio" ? placeholders("args", s.args) : [],
  },
  env: {
    personal: (s) => s.transport === "stdio" ? placeholders("env", s.env) : [],
  },
  url: {
    personal: (s) => s.transport !== "stdio" ? placeholders("url", [s.url]).map(atKey) : [],
  },
  headers: {
    personal: (s) => s.transport !== "stdio" ? placeholders("headers", s.headers) : [],
  },
  share: {
    // A process of one session, or of one person, keeps what that person did in it (notes,
    // files, logins): its lists are theirs. Only everyone's process is everyone's.
    personal: (s) =>
      s.transport === "stdio" && s.share !== "all"
        ? [{
          path: ["share"],
          carried: false,
          why: `share: ${s.share} gives each ${s.share} a process of its own, and what it keeps`,
        }]
        : [],
  },
  processes: { never: "how many processes serve everyone" },
  processIdleTimeout: { never: "when an unused process stops" },
  requiresUserToken: {
    personal: (s) =>
      s.userToken ? [{ path: ["requiresUserToken"], carried: true, why: ACTS_AS_PERSON }] : [],
  },
  userToken: {
    personal: (s) =>
      s.userToken ? [{ path: ["userToken"], carried: true, why: ACTS_AS_PERSON }] : [],
  },
  forwardRoots: {
    // Roots are the person's directories (file:///home/alice/…); a backend may list by them.
    personal: (s) =>
      s.forwardRoots
        ? [{ path: ["forwardRoots"], carried: false, why: "the client's roots reach the backend" }]
        : [],
  },
  identity: {
    // The backend is told who calls (headers, a signed assertion): it may answer each alike.
    // `groups:` only narrows which groups they state (even to none, the person's id remains),
    // and is refused beside neither, so it adds no reason of its own.
    personal: (s) =>
      s.transport !== "stdio" && (s.identity.headers || s.identity.assertion)
        ? [{
          path: ["identity"],
          carried: true,
          why: "the backend is told who calls (identity headers or assertion)",
        }]
        : [],
  },
  protocol: { never: "which MCP revision the backend speaks" },
  toolChanges: {
    never: "what a changed tool meets is decided per server, for everyone alike",
  },
  servers: { never: "an aggregate's members are each judged by their own entry" },
  delimiter: { never: "how an aggregate names its members' tools" },
  cacheTtl: { never: "how long an aggregate keeps lists, in the scope this rule gives" },
};

const ACTS_AS_PERSON = "the backend acts as each person with their own credential";

/** The url is one value: its reason points at the key, not at an index. */
function atKey(reason: PersonalReason): PersonalReason {
  return { ...reason, path: [reason.path[0]] };
}

/** Every reason the backend's answers can depend on the person; empty when they cannot. */
export function personalReasons(server: BackendServerConfig): PersonalReason[] {
  return Object.values(SERVER_KEY_RULES).flatMap((rule) =>
    "personal" in rule ? rule.personal(server) : []
  );
}

/** True when the backend's answers can depend on who asks: keep them per person. */
export function dependsOnPerson(server: BackendServerConfig): boolean {
  return personalReasons(server).length > 0;
}
