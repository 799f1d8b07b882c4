/**
 * Reading GitHub's REST API with a person's fresh token: one answer, or every page of a list
 * as GitHub paginates it (`Link: <…>; rel="next"`), bounded.
 */
import type { Clock } from "../core/clock.ts";
import { withTimeout } from "../core/timeout_signal.ts";
import { IDP_TIMEOUT_MS, IdpError } from "./provider.ts";

const API_HEADERS = {
  accept: "application/vnd.github+json",
  "x-github-api-version": "2022-11-28",
  "user-agent": "gatehouse",
};

/** Pages read of one list at most: at 100 a page, more than the groups a person keeps. */
export const MAX_PAGES = 5;

/** A list as read: its items, and whether pages were left unread (MAX_PAGES reached). */
export interface GithubList<T> {
  items: T[];
  truncated: boolean;
}

/** GitHub answered, but not with success (401, 403, 404, 5xx…). */
export class GithubStatusError extends IdpError {
  constructor(readonly status: number, path: string) {
    super("invalid_response", `GitHub answered ${status} for ${path}`);
  }
}

async function getPage(
  url: string,
  token: string,
  clock: Clock,
): Promise<{ body: unknown; link: string | null }> {
  return await withTimeout(clock, IDP_TIMEOUT_MS, async (signal) => {
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { ...API_HEADERS, authorization: `Bearer ${token}` },
        signal,
      });
    } catch (error) {
      throw new IdpError("unreachable", `GitHub could not be reached: ${(error as Error).message}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new GithubStatusError(response.status, new URL(url).pathname);
    }
    return { body: await response.json(), link: response.headers.get("link") };
  });
}

export async function getJson<T>(url: string, token: string, clock: Clock): Promise<T> {
  return (await getPage(url, token, clock)).body as T;
}

/**
 * The `rel="next"` target of a Link header, if it stays under `api`: the URL comes from the
 * answer, and the person's token must never follow it anywhere else.
 */
export function nextPage(link: string | null, api: string): string | undefined {
  if (!link) return undefined;
  for (const [, target, rels] of link.matchAll(/<([^>]*)>\s*;\s*rel="([^"]*)"/g)) {
    if (!rels.split(/\s+/).includes("next")) continue;
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return undefined;
    }
    const root = new URL(api);
    const under = url.origin === root.origin &&
      (url.pathname + "/").startsWith(root.pathname.replace(/\/?$/, "/"));
    return under ? url.href : undefined;
  }
  return undefined;
}

/** Every item of a list at `path` under `api`, 100 a page, at most MAX_PAGES pages. */
export async function getList<T>(
  api: string,
  path: string,
  token: string,
  clock: Clock,
): Promise<GithubList<T>> {
  const items: T[] = [];
  let url: string | undefined = `${api}${path}?per_page=100`;
  for (let page = 0; url !== undefined && page < MAX_PAGES; page++) {
    const { body, link } = await getPage(url, token, clock);
    if (Array.isArray(body)) items.push(...body);
    url = nextPage(link, api);
  }
  return { items, truncated: url !== undefined };
}
