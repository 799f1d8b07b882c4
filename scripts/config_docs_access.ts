/** The prose of docs/configuration.md on who may use which server and tool (config_docs.ts). */
export const ACCESS_PROSE = `## Who may use what

Without \`access:\` and \`tools:\`, everyone who may sign in (\`oauth.allow\`) and every service
credential of a server gets all of it. Both keys work the same on every kind of server, aggregates
included. A complete example: [examples/access-policies.yaml](examples/access-policies.yaml).

### Servers: \`access\`

\`\`\`yaml
servers:
  billing:
    access:
      emails: [alice@example.com]
      domains: [finance.example.com]
      groups: [billing-admins]
\`\`\`

Any one entry admits:

- \`emails\`: the person's address, compared without regard to case;
- \`domains\`: the part of the address after the \`@\`, exactly: \`finance.example.com\` does not
  admit \`eu.finance.example.com\`, list each domain;
- \`groups\`: a group the identity provider named at sign-in (see
  [Groups from the identity provider](#groups-from-the-identity-provider)) or a service
  credential's \`groups\`, compared exactly (lower-cased with \`provider: github\`).

An address counts only when the identity provider did not call it unverified. Service credentials
(bearer tokens, Basic users) have no address: only their \`groups\` can pass. \`access: {}\` and an
access that lists nothing are refused by \`check\` (they would admit nobody); leave \`access\` out to
admit everyone, and give a public server none (it has no caller to check).

The gateway checks it three times, always against the configuration it runs now:

1. **At \`/authorize\`**, once the person is known: for a server they may not use no code is issued.
   The person sees a page naming the server and asking them to turn to the administrators; its
   button returns to the application with \`error=access_denied\` (RFC 6749 §4.1.2.1). A request
   for several servers is refused whole when one of them refuses, and the page says so.
2. **At every token request** (the code exchange and each refresh): a grant whose person a server
   of its audience no longer admits is ended, and the client gets \`invalid_grant\` with
   \`access was withdrawn: …\`. A client that narrows a refresh with \`resource\` to servers still
   open to the person goes on.
3. **On every MCP request**, after authentication: a token (or credential) whose holder the server
   no longer admits gets HTTP 403, \`{"error": "insufficient_scope", …}\`, with
   \`WWW-Authenticate: Bearer error="insufficient_scope"\`: the token is valid, it no longer opens
   this server, and signing in again would not help.

A reload (\`SIGHUP\`) applies at once: the next request and the next refresh see the new rules, and
the open sessions of a server whose \`access\` or \`tools\` changed are ended.

### Service credentials: \`serviceAuths\`

\`\`\`yaml
    serviceAuths:
      - type: bearer
        tokens: ["\${CI_TOKEN}"]
        groups: [ci]
      - type: basic
        username: ci
        password: \${CI_PASSWORD}
        groups: [ci]
\`\`\`

\`groups\` are the groups that \`access\` and tool rules see for the credential's callers. \`type:
basic\` (HTTP Basic, RFC 7617) is for clients that can send nothing else: the username and password
are compared in constant time, and anything else is answered 401 with
\`WWW-Authenticate: Basic realm="gatehouse/NAME"\` for that server (a server that also takes bearer
tokens or OAuth sends both challenges). Basic sends the password with every request: use it only
over TLS, with a password of at least 16 characters (\`check\` refuses shorter ones), and prefer a
bearer token. A Basic caller is named \`basic:USERNAME\` in the logs and the audit trail; a token's
caller \`token:\` and a fingerprint of the token.

### Tools: \`tools\`

\`\`\`yaml
    tools:
      allow: ["get_*", "search"]     # absent: every tool
      deny: ["*_delete"]             # never, for anyone
      rules:                         # these tools only for those the rule admits
        - tools: ["write_*"]
          access: { groups: [editors] }
\`\`\`

Patterns are globs over the tool's name as the client sees it: \`*\` any characters (none too),
\`?\` exactly one, everything else itself, case and all (MCP tool names are case-sensitive).
Brackets, braces, spaces and regular expressions are refused by \`check\`. For a caller:

- a tool \`deny\` matches is hidden and never called, whatever else says;
- with \`allow\`, a tool it does not match is hidden and never called (\`allow: []\` hides all);
- a tool one or more \`rules\` match is for callers that every such rule's \`access\` admits (each
  rule narrows, none widens); a tool no rule matches is for everyone the server admits.

\`tools/list\` shows a caller only their tools, and a call of any other is refused before it reaches
the backend. In an aggregate, the aggregate's own \`tools\` see the names \`member.tool\` (\`*\` spans
the dot), each member's own \`tools\` and \`access\` apply inside it under the member's names, and a
member whose \`access\` refuses the person is left out entirely.

### Request timeouts: \`requestTimeout\`

A server's \`requestTimeout\` replaces \`limits.requestTimeout\` for it: longer for a backend
whose tools run long, shorter for one that should fail fast. In an aggregate, a call routed to a
member is bounded by that member's own \`requestTimeout\` (else the aggregate's, else
\`limits.requestTimeout\`). \`connections.idleTimeout\` follows the longest of them when left out;
like every \`connections\` setting it is read at start, so a reload that raises a server's
\`requestTimeout\` past it needs a restart (or an explicit, longer \`idleTimeout\`).

### What \`check\` warns of

- **\`no caller can bring these groups, so they never admit\`**: a rule names groups, but people
  bring none (no \`groupsClaim\` with \`oidc\` or \`azure\`; \`google\`) and no service credential of
  the server (or of an aggregate it is a member of) has \`groups\`.
- **\`its callers pass no rule of this server's access, so they are refused\`**: a service
  credential without a group the server's \`access\` lists; give it \`groups\`.
- **\`allows no tool: callers see none\`**: \`tools.allow: []\`.`;
