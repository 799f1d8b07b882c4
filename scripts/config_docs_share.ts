/** The prose of docs/configuration.md on `share:` (a stdio process for a person, or everyone). */
export const SHARE_PROSE = `### Sharing a stdio process

By default every session of a stdio server starts a process of its own (\`share: session\`):
the strongest isolation, and the most memory (the demo's server-everything holds about 73 MiB
per session; see [benchmarks.md](benchmarks.md#people-per-machine)). \`share:\` lets sessions
share one:

| \`share\` | processes | safe for |
|---|---|---|
| \`session\` (default) | one per session (2025 client) or per person's link (2026 client) | every server, including those that keep state per connection (a shell, a browser, a REPL) |
| \`person\` | one per person and server, whatever number of sessions (editors, CLIs, windows, reconnects) and both revisions | servers whose state belongs to their user: files, a knowledge graph, a login; \`{{user.*}}\` in \`args\` and \`env\` is filled with that person's values |
| \`all\` | a pool of \`processes\` serving everyone, sessions placed on the least used | servers that keep nothing per person (a calculator, a docs search, a read-only catalogue); \`check\` refuses \`{{user.*}}\` and \`requiresUserToken\` here, and warns that state is shared |

Sharing is invisible to each client: its \`initialize\` is answered with what the shared process
declared and the version the client asked for (when the gateway speaks it and the process is not
older); request ids and progress tokens are renumbered, so clients never collide; a
cancellation, a request timeout or a \`DELETE\` ends only that session's calls. List changes
reach every session on the process; resource updates only the sessions that subscribed (the
process hears one subscribe per resource, and the unsubscribe when the last session lets go).

A request of the process for input (elicitation, sampling, \`roots/list\`) reaches the session
whose call is waiting, when exactly one call that may take input (\`tools/call\`,
\`prompts/get\`, \`resources/read\`) is in flight on the process and its client declared that
capability; otherwise it is refused with an error saying why, never guessed. Over stdio nothing
ties a process's question or log line to the call it came from, so on a process shared by
everyone the one call in flight is taken as the asker only if no other session's call ran on the
process at any moment of its life: a process still working on bob's call after his answer went
out must not ask alice, whose call happens to be waiting. On a busy shared process, tools that ask
for input mid-call may therefore be refused: keep such servers on \`share: session\` or
\`person\`. A process shared by everyone is never asked for roots (\`roots/list\` is refused,
and the gateway does not offer the capability). A URL elicitation's completion goes to the session
it was asked of. Log messages go to the session with calls in flight (on everyone's process, by
the same rule as questions); with none or several (and any other notification that names no
session), to every session of a person's process, and to none on everyone's: dropped and counted
in \`gatehouse_shared_process_dropped_total\`. Tasks (2025-11-25) outlive their request and are
found by id or listed, so everyone's process shows no \`tasks\` capability, refuses \`tasks/*\`
and runs a call asked to run as a task as a plain call.

A line of a shared process's output that the gateway cannot pass on (past
\`limits.maxMessageBytes\`, not JSON, not JSON-RPC) fails only the call it answered, found by
the JSON-RPC \`id\` at its start or end (a line that names no call is logged and skipped); the
process and everyone else's sessions go on. A session's own process (\`share: session\`) still
ends the session on such a line.

A shared process with no session for \`processIdleTimeout\` is stopped, and the next session
starts it again. A reload that changes or removes the server ends its sessions (as for any
server) and stops its processes; new sessions get new ones. So does a change of the person's
credential (\`{{user.token}}\`): a session bringing a refreshed token gets a process started with it,
and the old process stops once its sessions have ended. A process that crashes ends its sessions with the error it ended with (their
clients start new sessions; the first starts the process again). \`limits.sessionsPerUser\` and
\`limits.maxSessions\` still count sessions; \`limits.processesPerUser\` and
\`limits.maxProcesses\` bound shared processes (a session that would need one more is refused
with 429; a pool at \`maxProcesses\` places the session on a busier process instead). The metrics
\`gatehouse_shared_processes\`, \`gatehouse_shared_process_sessions\`,
\`gatehouse_shared_process_sessions_max\`, \`gatehouse_shared_process_restarts_total\` and
\`gatehouse_shared_process_crashes_total\` show them by server.

A shared process speaks MCP 2025-11-25 to its backend (\`protocol: 2026-07-28\` is refused with
\`share\`; under \`auto\` the gateway initializes it as a 2025 server). What each mode isolates, and
what it does not: [security.md](security.md#shared-stdio-processes).`;
