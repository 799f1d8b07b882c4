/**
 * The Streamable HTTP side of one session: which SSE stream (or waiting JSON response) each
 * backend message goes to, event ids, and the event log that lets a client resume a stream
 * with `Last-Event-ID`.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import {
  classify,
  errorResponse,
  idKey,
  type RequestId,
  RpcErrorCode,
} from "../protocol/jsonrpc.ts";
import type { ClientChannel } from "../sessions/session.ts";
import { BoundedQueue } from "./bounded_queue.ts";
import type { Deadline, Deadlines } from "../../core/deadlines.ts";
import { SseWriter } from "./sse.ts";

/** Events a session keeps for resumption, across its streams; the oldest streams' go first. */
const MAX_LOGGED_EVENTS = 1_000;
/** Finished streams kept for a late resume, per session. */
const MAX_FINISHED_STREAMS = 16;
/** Messages held for a client that has no stream open, per session. */
const MAX_BACKLOG = 1_000;
/** Tells clients how long to wait before reconnecting a dropped stream. */
export const RETRY_MS = 1_000;
/**
 * How long a POST waits for its first message before its answer becomes an SSE stream anyway
 * (headers, priming event, keep-alives), so clients and proxies in between see it is alive.
 */
export const JSON_WINDOW_MS = 1_000;

/** How a POST is answered: its response alone as JSON, or an SSE stream for everything. */
export type FirstAnswer = { json: JSONRPCMessage } | { stream: SseWriter };

/**
 * A POST whose answer form waits for its first message. Most requests get their response and
 * nothing else, and one JSON body costs a fraction of an SSE stream (no stream machinery, no
 * replay log); a notification or server request first makes it a stream.
 */
class PendingAnswer {
  timer?: Deadline;

  constructor(
    readonly id: RequestId,
    readonly prime: boolean,
    readonly resolve: (answer: FirstAnswer) => void,
    private readonly deadlines: Deadlines,
  ) {}

  /** Answers with one message as JSON; the window's deadline is no longer needed. */
  answerJson(message: JSONRPCMessage): void {
    this.deadlines.cancel(this.timer);
    this.resolve({ json: message });
  }
}

/** One logical SSE stream; its connection may drop and be resumed. */
export class OutStream {
  /** This stream's part of the session's replay log, oldest first. */
  readonly events: { seq: number; data: string }[] = [];
  /** The size of `events`' data. */
  loggedBytes = 0;
  /** Requests whose responses this stream will carry; finished when none remain. */
  readonly awaiting = new Set<string>();
  writer?: SseWriter;
  #seq = 0;
  finished = false;

  constructor(
    readonly id: number,
    readonly standalone: boolean,
    /** Told of each event logged, so the session can keep its log within bounds. */
    private readonly onLogged: (bytes: number) => void,
  ) {}

  get live(): boolean {
    return this.writer?.open === true;
  }

  eventId(seq: number): string {
    return `${this.id}-${seq}`;
  }

  /** The priming event: an id and empty data, so a client can resume from the start. */
  prime(): void {
    this.writer?.write({ id: this.eventId(this.#seq), data: "", retryMs: RETRY_MS });
  }

  send(message: JSONRPCMessage): void {
    this.sendSerialized(JSON.stringify(message));
  }

  sendSerialized(data: string): void {
    const seq = ++this.#seq;
    this.events.push({ seq, data });
    this.loggedBytes += data.length;
    this.writer?.write({ id: this.eventId(seq), event: "message", data });
    this.onLogged(data.length);
  }

  /** Forgets the oldest logged event; its size, or 0 when there is none. */
  dropOldest(): number {
    const event = this.events.shift();
    if (!event) return 0;
    this.loggedBytes -= event.data.length;
    return event.data.length;
  }

  /** Attaches a (new) connection and replays what it missed after `afterSeq`. */
  resume(writer: SseWriter, afterSeq: number): void {
    this.writer?.close();
    this.writer = writer;
    for (const event of this.events) {
      if (event.seq > afterSeq) {
        writer.write({ id: this.eventId(event.seq), event: "message", data: event.data });
      }
    }
    if (this.finished) writer.close();
  }

  finish(): void {
    this.finished = true;
    this.writer?.close();
  }
}

export class StreamableChannel implements ClientChannel {
  readonly #streams = new Map<number, OutStream>();
  readonly #routes = new Map<
    string,
    OutStream | PendingAnswer | ((message: JSONRPCMessage) => void)
  >();
  /** What the streams' replay logs hold together, and may hold. */
  readonly #log = { events: 0, bytes: 0, maxBytes: 0 };
  readonly #backlog: BoundedQueue<string>;
  #standalone?: OutStream;
  #nextStreamId = 1;
  #ended = false;

  /**
   * @param maxBufferedBytes what one stream may hold for a slow client; the replay log keeps
   * half of it so that replaying the whole log fits into a fresh stream.
   * @param deadlines where the JSON window of a POST runs out (the session's deadlines).
   */
  constructor(readonly maxBufferedBytes: number, private readonly deadlines: Deadlines) {
    this.#log.maxBytes = maxBufferedBytes / 2;
    this.#backlog = new BoundedQueue(MAX_BACKLOG, maxBufferedBytes / 2);
  }

  /** What the replay logs hold now: events and their bytes. */
  get logged(): { events: number; bytes: number; streams: number } {
    return { events: this.#log.events, bytes: this.#log.bytes, streams: this.#streams.size };
  }

  /** A stream for the response to one request (POST answered with SSE). */
  openRequestStream(id: RequestId, writer: SseWriter, prime: boolean): OutStream {
    const stream = this.#newStream(false);
    stream.writer = writer;
    stream.awaiting.add(idKey(id));
    this.#routes.set(idKey(id), stream);
    if (prime) stream.prime();
    return stream;
  }

  /**
   * Waits for the first message for one request (POST accepting both forms): the response
   * itself is answered as JSON; anything else, or nothing within `windowMs`, opens an SSE
   * stream (primed when `prime`) that carries it and everything after. With an infinite
   * window only a message other than the response opens the stream.
   */
  answerFirst(id: RequestId, prime: boolean, windowMs = JSON_WINDOW_MS): Promise<FirstAnswer> {
    return new Promise((resolve) => {
      const key = idKey(id);
      const pending = new PendingAnswer(id, prime, resolve, this.deadlines);
      if (Number.isFinite(windowMs)) {
        pending.timer = this.deadlines.add(windowMs, () => this.#promote(key, pending));
      }
      this.#routes.set(key, pending);
    });
  }

  /** Turns a pending answer into an SSE stream, which takes its place in the routes. */
  #promote(key: string, pending: PendingAnswer): OutStream | undefined {
    this.deadlines.cancel(pending.timer);
    if (this.#routes.get(key) !== pending) return undefined;
    const writer = new SseWriter(this.maxBufferedBytes, this.deadlines.clock);
    const stream = this.openRequestStream(pending.id, writer, pending.prime);
    pending.resolve({ stream: writer });
    return stream;
  }

  /** Waits for the response to one request (POST answered with JSON). */
  awaitResponse(id: RequestId): Promise<JSONRPCMessage> {
    return new Promise((resolve) => this.#routes.set(idKey(id), resolve));
  }

  /** The standalone GET stream; undefined if one is already connected. */
  openStandalone(writer: SseWriter, prime: boolean): OutStream | undefined {
    if (this.#standalone?.live) return undefined;
    const stream = this.#standalone ?? this.#newStream(true);
    this.#standalone = stream;
    stream.resume(writer, Number.MAX_SAFE_INTEGER);
    if (prime) stream.prime();
    for (const data of this.#backlog.drain()) stream.sendSerialized(data);
    return stream;
  }

  /** Resumes the stream named by a `Last-Event-ID`; false if there is no such stream. */
  resume(lastEventId: string, writer: SseWriter): boolean {
    const match = /^(\d+)-(\d+)$/.exec(lastEventId);
    const stream = match ? this.#streams.get(Number(match[1])) : undefined;
    if (!match || !stream) return false;
    stream.resume(writer, Number(match[2]));
    return true;
  }

  deliver(message: JSONRPCMessage, related?: RequestId): void {
    if (this.#ended) return;
    const isResponse = classify(message)?.kind === "response";
    const route = related === undefined ? undefined : this.#routes.get(idKey(related));
    if (route instanceof PendingAnswer) {
      if (isResponse) {
        this.#routes.delete(idKey(related!));
        return route.answerJson(message);
      }
      return this.#promote(idKey(related!), route)?.send(message);
    }
    if (typeof route === "function") {
      if (isResponse) {
        this.#routes.delete(idKey(related!));
        return route(message);
      }
    } else if (route) {
      route.send(message);
      if (isResponse) this.#responded(route, related!);
      return;
    }
    this.#sendUnsolicited(message);
  }

  #responded(stream: OutStream, id: RequestId): void {
    this.#routes.delete(idKey(id));
    stream.awaiting.delete(idKey(id));
    if (stream.awaiting.size > 0) return;
    stream.finish();
    if (!stream.live) this.#pruneFinished();
  }

  /** A backend message tied to no request: the GET stream, else a live request stream. */
  #sendUnsolicited(message: JSONRPCMessage): void {
    if (this.#standalone?.live) return this.#standalone.send(message);
    let newest: OutStream | undefined;
    for (const stream of this.#streams.values()) {
      if (!stream.standalone && stream.live && !stream.finished) newest = stream;
    }
    if (newest) return newest.send(message);
    let waiting: [string, PendingAnswer] | undefined;
    for (const [key, route] of this.#routes) {
      if (route instanceof PendingAnswer) waiting = [key, route];
    }
    if (waiting) return this.#promote(...waiting)?.send(message);
    if (this.#standalone) return this.#standalone.send(message);
    const data = JSON.stringify(message);
    this.#backlog.push(data, data.length);
  }

  #newStream(standalone: boolean): OutStream {
    const stream = new OutStream(this.#nextStreamId++, standalone, (bytes) => this.#logged(bytes));
    this.#streams.set(stream.id, stream);
    this.#pruneFinished();
    return stream;
  }

  /** Keeps the replay logs within bounds, dropping the oldest streams' events first. */
  #logged(bytes: number): void {
    const log = this.#log;
    log.events++;
    log.bytes += bytes;
    const over = () => log.events > MAX_LOGGED_EVENTS || log.bytes > log.maxBytes;
    for (const stream of this.#streams.values()) {
      while (over() && stream.events.length > 0) {
        log.bytes -= stream.dropOldest();
        log.events--;
      }
      if (!over()) return;
    }
  }

  #pruneFinished(): void {
    const finished = [...this.#streams.values()].filter((s) => s.finished && !s.live);
    for (const stream of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_STREAMS))) {
      this.#streams.delete(stream.id);
      this.#log.events -= stream.events.length;
      this.#log.bytes -= stream.loggedBytes;
    }
  }

  ended(reason: string): void {
    this.#ended = true;
    for (const [key, route] of this.#routes) {
      // Normally the session has answered every request already; this is the safety net
      // that keeps a waiting HTTP request from hanging.
      const id = key[0] === "n" ? Number(key.slice(1)) : key.slice(1);
      const error = errorResponse(id, RpcErrorCode.backendError, reason);
      if (route instanceof PendingAnswer) route.answerJson(error);
      else if (typeof route === "function") route(error);
      else route.send(error);
    }
    this.#routes.clear();
    for (const stream of this.#streams.values()) stream.writer?.close();
  }
}
