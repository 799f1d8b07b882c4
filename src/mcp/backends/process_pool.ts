/**
 * The shared stdio processes of this gateway (`share: person`, `share: all`): which process a
 * new session joins, starting one when none fits, under `limits.processesPerUser` and
 * `limits.maxProcesses`; stopping a process no session has used for `processIdleTimeout`;
 * forgetting a crashed one so that the next session starts it again; and what the metrics
 * read (processes, sessions on them, restarts). Kept for the gateway's life, across reloads: a
 * server whose configuration changed gets new processes, the old ones end with their sessions.
 */
import { sameConfig } from "../../config/compare.ts";
import type { ServerConfig, StdioServerConfig } from "../../config/types.ts";
import type { Clock, Timer } from "../../core/clock.ts";
import { GatehouseError } from "../../core/errors.ts";
import type { Logger } from "../../observability/logger.ts";
import type { Transport } from "../../sdk.ts";
import type { ProcessPort } from "./process_port.ts";
import { SharedProcess } from "./shared_process.ts";

/** A new session would need a shared process over `limits.processesPerUser` or `maxProcesses`. */
export class ProcessLimitError extends GatehouseError<"too_many_processes"> {
  constructor(message: string) {
    super("too_many_processes", message);
  }
}

export interface ProcessLimits {
  processesPerUser: number;
  maxProcesses: number;
}

/** What a session's backend needs to join (or start) a shared process. */
export interface JoinRequest {
  server: StdioServerConfig;
  /** Whose session it is (ignored for `share: all`). */
  person: string;
  /** A new, unstarted transport for the process, should one have to start, logging to `logger`. */
  spawn(logger: Logger): Transport;
  /** How long a new process may take to start and answer initialize. */
  startTimeoutMs: number;
  /**
   * What of the person the process is started with: its args and environment with the
   * placeholders filled (`{{user.token}}`, `{{user.groups}}`, …). A session bringing other
   * values (a refreshed credential, groups changed at the identity provider) gets a process
   * started with them, and the old one stops once its sessions have ended: a process kept
   * with the groups a person no longer has would still act on them.
   */
  startedWith?: string;
}

interface Entry {
  process: SharedProcess;
  /** The person it is counted against; undefined for everyone's. */
  person?: string;
  idle?: Timer;
  stopping?: boolean;
  /** Its server was changed or removed by a reload: it stops once its last session has ended. */
  retired?: boolean;
}

interface Group {
  config: StdioServerConfig;
  /** What of the person its processes were started with (in memory, as the child has it). */
  startedWith?: string;
  entries: Entry[];
  /** Processes started for this group so far: each after the first is a restart. */
  started: number;
}

/** Per server: processes running, sessions on them, and restarts so far. */
export interface PoolReading {
  server: string;
  processes: number;
  sessions: number;
  busiest: number;
}

export class ProcessPool {
  readonly #groups = new Map<string, Group>();
  readonly #perPerson = new Map<string, number>();
  #total = 0;
  readonly #restarts = new Map<string, number>();
  readonly #crashes = new Map<string, number>();
  readonly #dropped = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private limits: ProcessLimits,
    private readonly logger: Logger,
  ) {}

  /** New limits (a configuration reload); processes running over them are left to end. */
  configure(limits: ProcessLimits): void {
    this.limits = limits;
  }

  /**
   * A reload: processes of servers now changed or gone take no new session, and stop once
   * their last session has ended (the registry ends those sessions itself).
   */
  reconfigure(servers: ReadonlyMap<string, ServerConfig>): void {
    for (const [key, group] of [...this.#groups]) {
      if (sameConfig(group.config, servers.get(group.config.name))) continue;
      this.#groups.delete(key);
      for (const entry of group.entries) this.#retire(entry);
    }
  }

  /** Shared processes running now. */
  get size(): number {
    return this.#total;
  }

  /** A port for the session on the process it should use; throws `ProcessLimitError`. */
  join(request: JoinRequest): ProcessPort {
    const { server, person } = request;
    const everyone = server.share === "all";
    const key = `${server.name}\n${everyone ? "" : person}`;
    let group = this.#groups.get(key);
    if (
      group && (!sameConfig(group.config, server) || group.startedWith !== request.startedWith)
    ) {
      // Reloaded with another configuration, or the person's values changed (credential,
      // groups): new sessions get a new process, started with what they bring.
      for (const entry of group.entries) this.#retire(entry);
      group = {
        config: server,
        startedWith: request.startedWith,
        entries: [],
        started: group.started,
      };
      this.#groups.set(key, group);
    }
    if (!group) {
      this.#groups.set(
        key,
        group = { config: server, startedWith: request.startedWith, entries: [], started: 0 },
      );
    }
    const live = group.entries.filter((entry) =>
      !entry.process.ended && !entry.stopping && !entry.retired
    );
    const least = live.reduce<Entry | undefined>(
      (best, entry) => !best || entry.process.sessions < best.process.sessions ? entry : best,
      undefined,
    );
    const wanted = everyone ? server.processes : 1;
    let entry = least && (least.process.sessions === 0 || live.length >= wanted)
      ? least
      : undefined;
    if (!entry) {
      const refusal = this.#refusal(everyone ? undefined : person);
      if (refusal === undefined) entry = this.#start(group, request, everyone ? undefined : person);
      else if (least) entry = least; // everyone's pool at maxProcesses: share a busier one
      else throw new ProcessLimitError(refusal);
    }
    entry.idle?.clear();
    entry.idle = undefined;
    return entry.process.port();
  }

  /** Stops every shared process (the gateway is stopping). */
  async closeAll(reason: string): Promise<void> {
    const entries = [...this.#groups.values()].flatMap((group) => group.entries);
    await Promise.all(entries.map((entry) => this.#stop(entry, reason)));
  }

  /** What the metrics show, per server. */
  readings(): PoolReading[] {
    const byServer = new Map<string, PoolReading>();
    for (const group of this.#groups.values()) {
      const server = group.config.name;
      let reading = byServer.get(server);
      if (!reading) {
        byServer.set(server, reading = { server, processes: 0, sessions: 0, busiest: 0 });
      }
      for (const { process } of group.entries) {
        if (process.ended) continue;
        reading.processes++;
        reading.sessions += process.sessions;
        reading.busiest = Math.max(reading.busiest, process.sessions);
      }
    }
    return [...byServer.values()];
  }

  /** Processes started again after one of the same server (and person) had run, per server. */
  restarts(): Map<string, number> {
    return this.#restarts;
  }

  /** Shared processes that ended on their own (crashed, or exited), per server. */
  crashes(): Map<string, number> {
    return this.#crashes;
  }

  /** Notices of everyone's processes dropped for naming no call, per server. */
  dropped(): ReadonlyMap<string, number> {
    return this.#dropped;
  }

  #refusal(person: string | undefined): string | undefined {
    const { processesPerUser, maxProcesses } = this.limits;
    if (this.#total >= maxProcesses) {
      return `the gateway runs its most shared backend processes (limits.maxProcesses: ${maxProcesses}); try again later`;
    }
    if (person !== undefined && (this.#perPerson.get(person) ?? 0) >= processesPerUser) {
      return `you have the most shared backend processes one person may (limits.processesPerUser: ${processesPerUser}); end sessions of other servers first`;
    }
    return undefined;
  }

  #start(group: Group, request: JoinRequest, person: string | undefined): Entry {
    const server = request.server;
    const logger = this.logger.child({ server: server.name, share: server.share });
    if (group.started++ > 0) this.#count(this.#restarts, server.name);
    const entry: Entry = { person, process: undefined as unknown as SharedProcess };
    entry.process = new SharedProcess({
      transport: request.spawn(logger),
      clock: this.clock,
      logger,
      startTimeoutMs: request.startTimeoutMs,
      everyone: person === undefined,
      forwardRoots: server.forwardRoots,
      onEmpty: () => {
        if (entry.retired) return void this.#stop(entry, "it was replaced by a newer one");
        entry.idle?.clear();
        entry.idle = this.clock.setTimeout(
          () => {
            if (entry.process.sessions === 0) {
              void this.#stop(entry, "no session used it for processIdleTimeout");
            }
          },
          server.processIdleTimeoutMs,
          { unref: true },
        );
      },
      onDropped: (method) => {
        this.#count(this.#dropped, server.name);
        logger.debug("dropped a notice of everyone's process that names no call", { method });
      },
      onEnded: (reason) => {
        if (!entry.stopping) {
          this.#count(this.#crashes, server.name);
          logger.warn("shared backend process ended", { reason });
        }
        this.#forget(group, entry);
      },
    });
    group.entries.push(entry);
    this.#total++;
    if (person !== undefined) this.#perPerson.set(person, (this.#perPerson.get(person) ?? 0) + 1);
    logger.info("shared backend process started", { pid: entry.process.pid });
    return entry;
  }

  #retire(entry: Entry): void {
    entry.retired = true;
    if (entry.process.sessions === 0) void this.#stop(entry, "it was replaced by a newer one");
  }

  async #stop(entry: Entry, reason: string): Promise<void> {
    entry.stopping = true;
    entry.idle?.clear();
    await entry.process.stop(reason);
  }

  /**
   * The process ended: its places are free, and the next session starts another. The group
   * stays (one small record per person and server), so that start counts as a restart.
   */
  #forget(group: Group, entry: Entry): void {
    const at = group.entries.indexOf(entry);
    if (at < 0) return;
    group.entries.splice(at, 1);
    entry.idle?.clear();
    this.#total--;
    if (entry.person !== undefined) {
      const left = (this.#perPerson.get(entry.person) ?? 1) - 1;
      if (left > 0) this.#perPerson.set(entry.person, left);
      else this.#perPerson.delete(entry.person);
    }
  }

  #count(counts: Map<string, number>, server: string): void {
    counts.set(server, (counts.get(server) ?? 0) + 1);
  }
}
