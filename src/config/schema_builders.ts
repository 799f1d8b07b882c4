/**
 * The vocabulary the config schema is written in: the JSON Schema type, and builders for the
 * value kinds config.yaml uses (durations, sizes, rates, counts, texts, lists, flags), each
 * carrying the wording docs/configuration.md shows for it.
 */

export interface JsonSchema {
  $schema?: string;
  $id?: string;
  $defs?: Record<string, JsonSchema>;
  $ref?: string;
  title?: string;
  description?: string;
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  default?: unknown;
  examples?: unknown[];
  oneOf?: JsonSchema[];
  minProperties?: number;
  anyOf?: JsonSchema[];
  allOf?: JsonSchema[];
  if?: JsonSchema;
  then?: JsonSchema;
}

const DURATION = "^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h|d)\\s*$";
const SIZE = "^\\s*\\d+(\\.\\d+)?\\s*(B|KB|MB|GB|KiB|MiB|GiB)\\s*$";
const RATE = "^\\s*\\d+\\s*/\\s*(s|sec|second|min|minute|h|hour|d|day)\\s*$";
/**
 * host:port, as `listen:` and `metrics.listen` take it; the port may come from the environment
 * (`127.0.0.1:${PORT:-8080}`, as the shipped config.yaml has it).
 */
export const LISTEN =
  "^(\\[[0-9a-fA-F:]+\\]|[A-Za-z0-9.-]+):(\\d{1,5}|\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-\\d{1,5})?\\})$";

export const duration = (description: string, fallback?: string): JsonSchema => ({
  type: "string",
  pattern: DURATION,
  description: `${description} A duration: a number and ms, s, m, h or d.`,
  ...(fallback ? { default: fallback } : {}),
});

export const size = (description: string, fallback?: string): JsonSchema => ({
  anyOf: [{ type: "string", pattern: SIZE }, { type: "integer", minimum: 1 }],
  description: `${description} A size: bytes, or a number and KB, MB, GB, KiB, MiB or GiB.`,
  ...(fallback ? { default: fallback } : {}),
});

export const count = (description: string, fallback: number): JsonSchema => ({
  type: "integer",
  minimum: 1,
  description,
  default: fallback,
});

export const text = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: "string",
  minLength: 1,
  description,
  ...extra,
});

export const list = (description: string, extra: JsonSchema = {}): JsonSchema => ({
  type: "array",
  items: { type: "string" },
  description,
  default: [],
  ...extra,
});

export const flag = (description: string, fallback: boolean): JsonSchema => ({
  type: "boolean",
  description,
  default: fallback,
});

export const rate = (description: string, fallback: string): JsonSchema => ({
  anyOf: [{ type: "string", pattern: RATE }, { const: "off" }, { const: false }],
  description: `${description} A rate such as "600/min", "20/s" or "100/hour", or off.`,
  default: fallback,
});
