/**
 * The Streamable HTTP side of one session: which SSE stream (or waiting JSON response) each
 * backend message goes to, event ids, and the event log that lets a client resume a stream
 * with `Last-Event-ID`.
 */
import type { JSONRPCMessage } from "../../sdk.ts";
import { classify, errorResponse, idKey, type RequestId, RpcErrorCode } from "../jsonrpc.ts";
import type { ClientChannel } from "../session.ts";
import { BoundedQueue } from "./bounded_queue.ts";
import { SseWriter } from "./sse.ts";

/** Events a session keeps for resumption, across its streams; older ones are dropped. */
const MAX_LOGGED_EVENTS = 1_000;
/** Finished streams kept for a late resume, per session. */
const MAX_FINISHED_STREAMS = 16;
/** Messages held for a client that has no stream open, per session. */
const MAX_BACKLOG = 1_000;
/** Tells clients how long to wait before reconnecting a dropped stream. */
export const RETRY_MS = 1_000;

/** One logical SSE stream; its connection may drop and be resumed. */
export class OutStream {
  /** This stream's part of the session's replay log, oldest first. */
  readonly events: { seq: number; data: string }[] = [];
  /** Requests whose responses this stream will carry; finished when none remain. */
  readonly awaiting = new Set<string>();
  writer?: SseWriter;
  #seq = 0;
  finished = false;

  constructor(
    readonly id: number,
    readonly standalone: boolean,
    private readonly log: BoundedQueue<OutStream>,
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
    // The session's log drops its oldest event (maybe this stream's first) when over budget.
    this.log.push(this, data.length);
    this.writer?.write({ id: this.eventId(seq), event: "message", data });
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
  readonly #routes = new Map<string, OutStream | ((message: JSONRPCMessage) => void)>();
  /**
   * Every event of every stream in the order sent; dropping the oldest drops it from its
   * stream's log too (a stream's events are in the same order as the session's).
   */
  readonly #log: BoundedQueue<OutStream>;
  readonly #backlog: BoundedQueue<string>;
  #standalone?: OutStream;
  #nextStreamId = 1;
  #ended = false;

  /**
   * @param maxBufferedBytes what one stream may hold for a slow client; the replay log keeps
   * half of it so that replaying the whole log fits into a fresh stream.
   */
  constructor(readonly maxBufferedBytes: number) {
    this.#log = new BoundedQueue(
      MAX_LOGGED_EVENTS,
      maxBufferedBytes / 2,
      (stream) => stream.events.shift(),
    );
    this.#backlog = new BoundedQueue(MAX_BACKLOG, maxBufferedBytes / 2);
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
    if (this.#standalone) return this.#standalone.send(message);
    const data = JSON.stringify(message);
    this.#backlog.push(data, data.length);
  }

  #newStream(standalone: boolean): OutStream {
    const stream = new OutStream(this.#nextStreamId++, standalone, this.#log);
    this.#streams.set(stream.id, stream);
    this.#pruneFinished();
    return stream;
  }

  #pruneFinished(): void {
    const finished = [...this.#streams.values()].filter((s) => s.finished && !s.live);
    for (const stream of finished.slice(0, Math.max(0, finished.length - MAX_FINISHED_STREAMS))) {
      this.#streams.delete(stream.id);
    }
  }

  ended(reason: string): void {
    this.#ended = true;
    for (const [key, route] of this.#routes) {
      // Normally the session has answered every request already; this is the safety net
      // that keeps a waiting HTTP request from hanging.
      const id = key[0] === "n" ? Number(key.slice(1)) : key.slice(1);
      const error = errorResponse(id, RpcErrorCode.backendError, reason);
      if (typeof route === "function") route(error);
      else route.send(error);
    }
    this.#routes.clear();
    for (const stream of this.#streams.values()) stream.writer?.close();
  }
}
