/**
 * Reads the configuration: file → YAML (with line numbers) → `${ENV}` substitution →
 * validation. Every problem is reported with its YAML path, line and a hint.
 */
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";
import { ConfigError, type ConfigIssue, type ConfigPath } from "./issues.ts";
import type { ResolvedConfig } from "./types.ts";
import { type Substitution, validateConfig } from "./validate.ts";
import { firstSyntaxIssue, hintUnquotedBraces } from "./yaml_errors.ts";

const ENV_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
/** A complete reference, or a `${` that starts none. */
const ANY_REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}|\$\{/g;

export type EnvLookup = (name: string) => string | undefined;

/** What the command line puts over the file: `--port N` replaces the port of `listen:`. */
export interface ConfigOverrides {
  port?: number;
}

/** Loads and validates the file at `path`; throws `ConfigError` listing every problem. */
export async function loadConfigFile(
  path: string,
  env: EnvLookup,
  overrides: ConfigOverrides = {},
): Promise<ResolvedConfig> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (error) {
    const reason = error instanceof Deno.errors.NotFound ? "file not found" : String(error);
    throw new ConfigError([{
      path: [],
      message: `cannot read the configuration: ${reason}`,
      hint: "pass --config PATH or set GATEHOUSE_CONFIG",
    }], path);
  }
  return parseConfigText(text, env, path, overrides);
}

/** Parses YAML text into a resolved config; throws `ConfigError` listing every problem. */
export function parseConfigText(
  text: string,
  env: EnvLookup,
  file?: string,
  overrides: ConfigOverrides = {},
): ResolvedConfig {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
    logLevel: "error", // the stringified-key warning went to stderr; a mapping key is refused anyway
  });
  const syntax = firstSyntaxIssue(doc.errors, text, lineCounter);
  if (syntax) throw new ConfigError([syntax], file);
  const issues: ConfigIssue[] = [];

  const substitutions: Substitution[] = [];
  const substituted = withOverrides(
    substituteEnv(doc.toJS(), [], env, issues, substitutions),
    overrides,
  );
  const result = validateConfig(substituted, substitutions);
  // A value whose variable is missing is reported once, as missing: what validation then says
  // of the placeholder left in its place ("shorter than 32 bytes") would only mislead.
  const unresolved = issues.map((issue) => issue.path.join("\u0000"));
  issues.push(
    ...result.issues.filter((issue) => !unresolved.includes(issue.path.join("\u0000"))),
  );
  if (issues.length || !result.config) {
    for (const issue of issues) {
      issue.line ??= lineOf(doc.contents, issue.path, lineCounter);
      hintUnquotedBraces(issue, text);
    }
    throw new ConfigError(issues, file);
  }
  for (const warning of result.warnings) {
    warning.line ??= lineOf(doc.contents, warning.path, lineCounter);
  }
  return result.config;
}

/**
 * Replaces `${NAME}` and `${NAME:-default}` in every string value (keys stay as written);
 * each value taken from the environment is noted in `substitutions`, as a secret to keep out
 * of logs.
 */
function substituteEnv(
  value: unknown,
  path: ConfigPath,
  env: EnvLookup,
  issues: ConfigIssue[],
  substitutions: Substitution[],
): unknown {
  if (typeof value === "string") {
    const broken = brokenReference(value);
    if (broken) {
      issues.push({ path, ...broken });
      return value;
    }
    return value.replace(ENV_REFERENCE, (whole, name: string, fallback?: string) => {
      const found = env(name);
      if (found !== undefined && found !== "") {
        substitutions.push({ path, value: found });
        return found;
      }
      if (fallback !== undefined) return fallback;
      issues.push({
        path,
        message: `environment variable ${name} is not set`,
        hint: `export ${name}=…, or write \${${name}:-default} to give a default`,
      });
      return whole;
    });
  }
  if (Array.isArray(value)) {
    return value.map((item, i) => substituteEnv(item, [...path, i], env, issues, substitutions));
  }
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [
        key,
        substituteEnv(item, [...path, key], env, issues, substitutions),
      ]),
    );
  }
  return value;
}

/**
 * The document with the command line's overrides applied before validation, so that a `baseUrl`
 * left out follows the port given. A `listen:` that is no `host:port` is left for validation to
 * report.
 */
function withOverrides(document: unknown, overrides: ConfigOverrides): unknown {
  if (overrides.port === undefined || !document || typeof document !== "object") return document;
  const listen = (document as { listen?: unknown }).listen ?? "127.0.0.1:8080";
  if (typeof listen !== "string" || !/:\d+$/.test(listen)) return document;
  return { ...document, listen: listen.replace(/:\d+$/, `:${overrides.port}`) };
}

/**
 * A `${` that starts no complete `${NAME}` or `${NAME:-default}`: refused rather than taken as
 * literal text, since `secret: ${GATEHOUSE_SECRET` would otherwise become a secret everyone can
 * read in the file. Only the name is shown, never what follows it.
 */
function brokenReference(text: string): { message: string; hint: string } | undefined {
  for (const match of text.matchAll(ANY_REFERENCE)) {
    if (match[0] !== "${") continue;
    const name = /^\$\{([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(match.index))?.[1];
    return name
      ? {
        message: `\${${name} is not closed`,
        hint: `write \${${name}} (or \${${name}:-default}) to read the environment variable`,
      }
      : {
        message: "${ is not followed by a variable name",
        hint: "write ${NAME} with a name of letters, digits and _ (not starting with a digit)",
      };
  }
  return undefined;
}

/** The line of the deepest node along `path` that exists in the document. */
function lineOf(root: unknown, path: ConfigPath, lines: LineCounter): number | undefined {
  let node = root as Node | null | undefined;
  let best = node?.range?.[0];
  for (const part of path) {
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && item.key.value === part);
      if (pair && isScalar(pair.key) && pair.key.range) best = pair.key.range[0];
      next = pair?.value;
    } else if (isSeq(node) && typeof part === "number") {
      next = node.items[part];
      const range = (next as Node | undefined)?.range;
      if (range) best = range[0];
    }
    if (!next) break;
    node = next as Node;
  }
  return best === undefined ? undefined : lines.linePos(best).line;
}
