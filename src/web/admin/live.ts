/**
 * Live: the overview's figures and the audit list, pushed while a console page is open, over
 * one Server-Sent Events stream per page. Bounded: at most MAX_STREAMS open at once on this
 * replica (and MAX_PER_SESSION per console session), each ended after STREAM_LIFE_MS (the
 * browser reconnects), figures sent every TICK_MS from memory only (never a storage read).
 */
import type { Clock, Timer } from "../../core/clock.ts";
import type { ConsoleContext } from "./frame.ts";
import { eventRow } from "./audit_page.ts";
import { overviewNumbers, perMinute, serverState } from "./overview_page.ts";
import type { ConsoleSources } from "./sources.ts";

export const MAX_STREAMS = 16;
export const MAX_PER_SESSION = 4;
export const TICK_MS = 2_000;
export const STREAM_LIFE_MS = 5 * 60_000;
/** Events sent in one tick at most: a burst is summed up by the page's next load. */
const EVENTS_PER_TICK = 20;
/** Messages a page may leave unread (about half a minute of ticks) before its stream ends. */
const MAX_UNREAD = 32;

/** The figures a page shows, by their `data-live` names. */
export function liveFigures(sources: ConsoleSources, now: number): Record<string, string> {
  const servers = sources.servers();
  const total = overviewNumbers(sources, servers);
  const figures: Record<string, string> = {
    "total-sessions": String(total.sessions),
    "total-calls": String(total.callsPerMinute),
    "total-errors": String(total.errorsPerMinute),
  };
  for (const row of servers) {
    const series = sources.series(row.name);
    const rate = perMinute(series);
    figures[`sessions-${row.name}`] = String(row.sessions);
    figures[`calls-${row.name}`] = String(rate.calls);
    figures[`errors-${row.name}`] = String(rate.errors);
    figures[`state-${row.name}`] = serverState(sources, row, series.slice(-5), now).state;
  }
  return figures;
}

export class LiveStreams {
  #open = 0;
  readonly #perSession = new Map<string, number>();

  constructor(private readonly clock: Clock) {}

  get open(): number {
    return this.#open;
  }

  /** The stream for one open page, or a 503 when the bounds are reached. */
  stream(
    ctx: ConsoleContext,
    sources: ConsoleSources,
    sessionKey: string,
    since: number,
  ): Response {
    const mine = this.#perSession.get(sessionKey) ?? 0;
    if (this.#open >= MAX_STREAMS || mine >= MAX_PER_SESSION) {
      return new Response("too many live views are open; the page works without one", {
        status: 503,
        headers: { "retry-after": "30", "cache-control": "no-store" },
      });
    }
    this.#open++;
    this.#perSession.set(sessionKey, mine + 1);
    const encoder = new TextEncoder();
    let last = Math.min(since, sources.events.latestSeq);
    let tick: Timer | undefined;
    let end: Timer | undefined;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      tick?.clear();
      end?.clear();
      this.#open--;
      const left = (this.#perSession.get(sessionKey) ?? 1) - 1;
      if (left > 0) this.#perSession.set(sessionKey, left);
      else this.#perSession.delete(sessionKey);
    };
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        const send = (event: string, data: unknown) => {
          // A page that stopped reading (hidden, stalled, or never meaning to) is let go, and
          // what waited for it with it, rather than queued for until the stream's life ends.
          if ((controller.desiredSize ?? 0) < -MAX_UNREAD) {
            release();
            try {
              controller.error(new Error("the page stopped reading its live view"));
            } catch { /* already ended */ }
            return;
          }
          try {
            controller.enqueue(
              encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`),
            );
          } catch {
            release();
          }
        };
        const push = () => {
          const now = this.clock.now();
          send("figures", liveFigures(sources, now));
          const events = sources.events.since(last, EVENTS_PER_TICK);
          if (events.length) {
            last = events[events.length - 1].seq;
            const rows = events.map((event) => eventRow({ ...ctx, now }, event).toString());
            send("events", { rows: rows.reverse() });
          }
        };
        controller.enqueue(encoder.encode(`retry: ${TICK_MS * 2}\n\n`));
        push();
        tick = this.clock.setInterval(push, TICK_MS, { unref: true });
        end = this.clock.setTimeout(
          () => {
            release();
            try {
              controller.close();
            } catch { /* already closed */ }
          },
          STREAM_LIFE_MS,
          { unref: true },
        );
      },
      cancel: release,
    });
    return new Response(body, {
      headers: {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        "x-accel-buffering": "no",
      },
    });
  }
}

/** The page script: applies figures to `data-live` elements, prepends new audit rows. */
export const LIVE_SCRIPT = `"use strict";
(function () {
  if (!window.EventSource) return;
  var here = document.currentScript ? document.currentScript.src : "";
  var root = here.replace(/\\/live\\.js(\\?.*)?$/, "");
  var list = document.querySelector("[data-since]");
  var since = list ? list.getAttribute("data-since") : "";
  var source = new EventSource(root + "/live" + (since ? "?since=" + encodeURIComponent(since) : ""));
  source.addEventListener("figures", function (message) {
    var figures = JSON.parse(message.data);
    document.querySelectorAll("[data-live]").forEach(function (element) {
      var name = element.getAttribute("data-live");
      if (Object.prototype.hasOwnProperty.call(figures, name)) {
        element.textContent = figures[name];
        if (name.indexOf("state-") === 0) element.className = "state " + figures[name];
      }
    });
  });
  source.addEventListener("events", function (message) {
    var body = document.querySelector("[data-live=events]");
    if (!body) return;
    JSON.parse(message.data).rows.forEach(function (row) {
      body.insertAdjacentHTML("afterbegin", row);
    });
    while (body.rows.length > 50) body.deleteRow(body.rows.length - 1);
  });
  window.addEventListener("pagehide", function () { source.close(); });
})();
`;
