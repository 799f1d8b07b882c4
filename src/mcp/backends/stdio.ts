/**
 * A stdio backend: one child process speaking newline-delimited JSON-RPC, implementing the
 * SDK's `Transport` so sessions treat every backend alike. Output that is not JSON-RPC ends
 * the connection with an error saying what was wrong with it: a backend that breaks the
 * protocol cannot be trusted with the rest of the session. A process several sessions share
 * (`skipUnreadable`) instead skips such a line and fails only the call it answered
 * (unreadable_lines.ts), so one person's broken answer does not end everyone's sessions.
 */
import { GatehouseError } from "../../core/errors.ts";
import type { JSONRPCMessage, Transport } from "../../sdk.ts";
import { classify, whyNotJsonRpc } from "../protocol/jsonrpc.ts";
import type { Logger } from "../../observability/logger.ts";
import type { SecretMask } from "../../observability/mask.ts";
import { KEPT_HEAD_CHARS, KEPT_TAIL_CHARS, readLines } from "./lines.ts";
import { answerTooLargeMessage } from "./bounded_answers.ts";
import { answerInstead, unreadableAnswerMessage } from "./unreadable_lines.ts";
import { describeSchemaDump } from "./schema_dump.ts";
import { spawn, type SpawnSpec } from "./spawner.ts";
import { type Clock, waitAtMost } from "../../core/clock.ts";
import { withoutTerminalEscapes } from "../../core/display_text.ts";
import { LOG_POINTER } from "./exit_words.ts";

/** How long a closed pipe waits for the exit status that usually follows it. */
const EXIT_STATUS_WAIT_MS = 2_000;
/** How long an exit waits for the rest of stderr (a grandchild may hold the pipe open). */
const STDERR_DRAIN_MS = 500;
/** The last lines of stderr kept, logged with an exit the gateway did not ask for. */
const KEPT_STDERR_LINES = 5;

export interface StdioOptions {
  spec: SpawnSpec;
  maxMessageBytes: number;
  /** How long a child gets between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** The gateway's time, which the kill grace is measured on. */
  clock: Clock;
  /** With `mask`, a `maskingLogger`: stderr lines and quoted output are logged through it. */
  logger: Logger;
  /** The child's secrets (its person's token, configured ones): masked in its errors. */
  mask?: SecretMask;
  /** Skip a line that cannot be read and fail only its call, instead of ending (shared processes). */
  skipUnreadable?: boolean;
}

export class StdioBackend implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  #child?: Deno.ChildProcess;
  #writer?: WritableStreamDefaultWriter<Uint8Array>;
  #closed = false;
  #exited?: Promise<Deno.CommandStatus>;
  readonly #encoder = new TextEncoder();
  /** Lines waiting for the write under way, and the promise their senders wait on. */
  #outbox = "";
  #batch?: PromiseWithResolvers<void>;
  #writing = false;
  /** The last lines of stderr, for the log line of an exit; and when stderr has ended. */
  readonly #lastStderr: string[] = [];
  #stderrDone?: Promise<void>;
  /** Why the child is gone, worked out (and logged) once. */
  #exitReason?: Promise<string>;

  constructor(private readonly options: StdioOptions) {}

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): Promise<void> {
    const { spec, logger } = this.options;
    try {
      this.#child = spawn(spec);
    } catch (error) {
      const reason = error instanceof Deno.errors.NotFound
        ? `command not found: ${spec.command}`
        : `could not start ${spec.command}: ${(error as Error).message}`;
      return Promise.reject(new Error(this.options.mask?.mask(reason) ?? reason));
    }
    const child = this.#child;
    this.#writer = child.stdin.getWriter();
    this.#exited = child.status;
    logger.debug("backend process started", { pid: child.pid, command: spec.command });
    this.#pumpStdout(child.stdout);
    this.#stderrDone = this.#pumpStderr(child.stderr);
    child.status.then(async (status) => {
      if (this.#closed) return;
      const reason = await this.#exitReasonOf(status);
      if (!this.#closed) this.#fail(new BackendProcessEnded(reason));
    });
    return Promise.resolve();
  }

  /**
   * Messages sent while a write is under way go together in the next one: under load one
   * write carries many lines (a write to a pipe costs more than the line it carries), and
   * alone a message is written at once. Resolves once the message's write has completed.
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed || !this.#writer) {
      return Promise.reject(new Error("backend process is not running"));
    }
    this.#outbox += JSON.stringify(message) + "\n";
    const batch = this.#batch ??= Promise.withResolvers<void>();
    if (!this.#writing) void this.#drain();
    return batch.promise;
  }

  async #drain(): Promise<void> {
    this.#writing = true;
    while (this.#outbox && this.#writer) {
      const text = this.#outbox;
      const batch = this.#batch!;
      this.#outbox = "";
      this.#batch = undefined;
      try {
        await this.#writer.write(this.#encoder.encode(text));
        batch.resolve();
      } catch {
        batch.reject(await this.#pipeClosed("backend process closed its input"));
      }
    }
    this.#writing = false;
  }

  async close(): Promise<void> {
    if (this.#closed) return await this.#reap();
    this.#closed = true;
    await this.#reap();
    this.onclose?.();
  }

  /** Ends the child: close stdin, SIGTERM, then SIGKILL after the grace period. */
  async #reap(): Promise<void> {
    const child = this.#child;
    if (!child || !this.#exited) return;
    this.#writer?.close().catch(() => {});
    const exited = this.#exited.then(() => true);
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const gone = await waitAtMost(this.options.clock, this.options.killGraceMs, exited);
    if (!gone) {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await this.#exited;
    }
  }

  #fail(error: Error): void {
    if (this.#closed) return;
    this.onerror?.(this.options.mask?.maskError(error) ?? error);
    void this.close();
  }

  async #pumpStdout(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const max = this.options.maxMessageBytes;
    const skip = this.options.skipUnreadable;
    const onTooLong = (head: string, tail: string) =>
      this.#skipped(head, tail, answerTooLargeMessage(max));
    try {
      for await (const line of readLines(stdout, max, skip ? { onTooLong } : {})) {
        if (line.trim() === "") continue;
        let parsed: unknown;
        try {
          parsed = JSON.parse(line);
        } catch {
          if (skip) {
            const ends = [line.slice(0, KEPT_HEAD_CHARS), line.slice(-KEPT_TAIL_CHARS)] as const;
            this.#skipped(...ends, unreadableAnswerMessage("it is not JSON"));
            continue;
          }
          // Masked before it is cut, so that no piece of a secret is left at the cut.
          const shown = this.options.mask?.mask(line) ?? line;
          return this.#fail(
            new Error(`backend wrote invalid JSON-RPC: ${JSON.stringify(shown.slice(0, 120))}`),
          );
        }
        const classified = classify(parsed);
        if (!classified) {
          // The reason goes to the client; the line itself (its start) only to the log.
          const reason = whyNotJsonRpc(parsed);
          if (skip) {
            const ends = [line.slice(0, KEPT_HEAD_CHARS), line.slice(-KEPT_TAIL_CHARS)] as const;
            this.#skipped(...ends, unreadableAnswerMessage(reason));
            continue;
          }
          this.options.logger.warn("backend wrote a message that is not valid JSON-RPC 2.0", {
            reason,
            line: this.#excerpt(line),
          });
          return this.#fail(
            new Error(`the backend wrote a message that is not valid JSON-RPC 2.0: ${reason}`),
          );
        }
        if (classified.kind === "response" && classified.message.error) {
          this.#summarizeSchemaDump(classified.message.error, line);
        }
        this.onmessage?.(parsed as JSONRPCMessage);
      }
    } catch (error) {
      return this.#fail(new Error(`backend output rejected: ${(error as Error).message}`));
    }
    this.#fail(await this.#pipeClosed("backend process closed its output"));
  }

  /** A line skipped (skipUnreadable): its call, if one can be named, gets `reason` instead. */
  #skipped(head: string, tail: string, reason: string): void {
    const instead = answerInstead(head, tail, reason);
    this.options.logger.warn("skipped a line of the backend's output", {
      reason,
      line: this.#excerpt(head),
      answered: instead ? (instead as { id: unknown }).id : "no call it could be placed with",
    });
    if (instead) this.onmessage?.(instead);
  }

  /**
   * A pipe to the child usually closes because the process exited: give its status a moment to
   * arrive, so the error names the exit code rather than the pipe (under load the two can be
   * seconds apart).
   */
  async #pipeClosed(otherwise: string): Promise<BackendProcessEnded> {
    const status = await waitAtMost(this.options.clock, EXIT_STATUS_WAIT_MS, this.#exited!);
    return new BackendProcessEnded(status ? await this.#exitReasonOf(status) : otherwise);
  }

  /**
   * Why the child is gone, in words for the client: its exit, and, when it wrote to stderr,
   * where the log holds its last lines (one warn line, whatever the log level lets through of
   * the info lines before it), since that is where a program that cannot start says why.
   */
  #exitReasonOf(status: Deno.CommandStatus): Promise<string> {
    return this.#exitReason ??= (async () => {
      const how = describeExit(status);
      await waitAtMost(this.options.clock, STDERR_DRAIN_MS, this.#stderrDone ?? Promise.resolve());
      if (this.#closed || this.#lastStderr.length === 0) return how;
      const pid = this.#child?.pid;
      this.options.logger.warn("backend process exited", {
        pid,
        exit: how,
        lastStderr: [...this.#lastStderr],
      });
      return `${how}${LOG_POINTER} ("backend process exited", pid ${pid})`;
    })();
  }

  /** Replaces a schema library's issue dump in an error answer by one sentence. */
  #summarizeSchemaDump(error: { message: string }, line: string): void {
    const sentence = describeSchemaDump(error.message);
    if (sentence === undefined) return;
    this.options.logger.debug("backend answered with a schema validation dump", {
      sentence,
      line: this.#excerpt(line),
    });
    error.message = sentence;
  }

  /** The start of a line of output, for the log; masked before it is cut, like errors. */
  #excerpt(line: string): string {
    return (this.options.mask?.mask(line) ?? line).slice(0, 120);
  }

  async #pumpStderr(stderr: ReadableStream<Uint8Array>): Promise<void> {
    try {
      for await (const raw of readLines(stderr, 2000, { truncate: true })) {
        const line = withoutTerminalEscapes(raw);
        if (!line.trim()) continue;
        this.options.logger.info("backend stderr", { line });
        this.#lastStderr.push(line);
        if (this.#lastStderr.length > KEPT_STDERR_LINES) this.#lastStderr.shift();
      }
    } catch {
      // The pipe broke: the process is gone, and its exit is reported elsewhere.
    }
  }
}

/** The child is gone (exited, killed, or its pipes closed): said the same way however it shows. */
export class BackendProcessEnded extends GatehouseError<"backend_process_ended"> {
  constructor(message: string) {
    super("backend_process_ended", message);
  }
}

function describeExit(status: Deno.CommandStatus): string {
  return status.signal
    ? `backend process was killed by ${status.signal}`
    : `backend process exited with code ${status.code}`;
}
