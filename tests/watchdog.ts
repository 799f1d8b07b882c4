/**
 * Preloaded into every test module by `deno task test` (`deno test --preload`): gives each
 * `Deno.test` a time limit, so a test that waits for something that never comes fails with its
 * name, its step and what it was waiting for, instead of holding the run until CI's limit.
 *
 * - The limit is `GATEHOUSE_TEST_LIMIT` seconds (default 180) per test, steps included.
 * - What a test waits for is named by `tests/fixtures/waits.ts` (`waitUntil`, `within`), which
 *   reports to this file through a global hook; without the watchdog those helpers still bound
 *   their own waits.
 * - With `GATEHOUSE_TEST_PROGRESS` set to a file, each test appends `start` and `end` lines to
 *   it, so `.ci/run` can name the tests still running if the whole run must be ended.
 *
 * A test that overruns is failed; whatever it was stuck on is left behind, and the module goes
 * on with its next test (Deno does not wait for a failed test's leftovers).
 */

const LIMIT_MS = Number(Deno.env.get("GATEHOUSE_TEST_LIMIT") ?? "180") * 1_000;
const PROGRESS_FILE = Deno.env.get("GATEHOUSE_TEST_PROGRESS");

/** What the test that is running now is doing (tests in one module run one at a time). */
interface Running {
  name: string;
  where: string;
  steps: string[];
  waits: Map<number, string>;
}

let running: Running | undefined;
let nextWait = 0;

/** The hook `tests/fixtures/waits.ts` calls: returns the function that ends the wait. */
export interface WatchdogHook {
  waiting(what: string): () => void;
}

const hook: WatchdogHook = {
  waiting(what) {
    const test = running;
    if (!test) return () => {};
    const id = nextWait++;
    test.waits.set(id, what);
    return () => test.waits.delete(id);
  },
};
(globalThis as Record<symbol, unknown>)[Symbol.for("gatehouse.test.watchdog")] = hook;

function progress(event: "start" | "end", test: Running, outcome = ""): void {
  if (!PROGRESS_FILE) return;
  const line = `${new Date().toISOString()} ${event} ${test.where} :: ${test.name}${
    outcome ? ` :: ${outcome}` : ""
  }\n`;
  Deno.writeTextFileSync(PROGRESS_FILE, line, { append: true });
}

/** The test file and line that registered a test: the first stack frame outside this file. */
function caller(): string {
  const frames = new Error().stack?.split("\n").slice(1) ?? [];
  const self = import.meta.url;
  const frame = frames.find((line) => !line.includes(self)) ?? "";
  const location = /\((.*)\)$/.exec(frame.trim())?.[1] ?? frame.trim().replace(/^at /, "");
  const root = new URL("../", import.meta.url).href;
  return location.replace(root, "");
}

function describe(test: Running): string {
  const step = test.steps.length > 0 ? `, in step "${test.steps.join(" > ")}"` : "";
  const waits = [...test.waits.values()];
  const waiting = waits.length > 0
    ? `waiting for ${waits.map((w) => `"${w}"`).join(" and ")}`
    : "waiting on an await no helper named (wrap it in within() from tests/fixtures/waits.ts)";
  return `test "${test.name}" (${test.where}) overran its ${
    LIMIT_MS / 1_000
  } s limit${step}, ${waiting}`;
}

type StepFn = (t: Deno.TestContext) => void | Promise<void>;

/** Wraps a step's context so the names of the steps under way are known. */
function watchSteps(t: Deno.TestContext, test: Running): Deno.TestContext {
  return new Proxy(t, {
    get(target, property) {
      if (property !== "step") return Reflect.get(target, property, target);
      return (nameOrDefinition: unknown, fn?: StepFn) => {
        const definition = typeof nameOrDefinition === "string"
          ? { name: nameOrDefinition, fn: fn! }
          : typeof nameOrDefinition === "function"
          ? { name: nameOrDefinition.name, fn: nameOrDefinition as StepFn }
          : nameOrDefinition as Deno.TestStepDefinition;
        return target.step({
          ...definition,
          fn: async (inner) => {
            test.steps.push(definition.name);
            try {
              await definition.fn(watchSteps(inner, test));
            } finally {
              test.steps.splice(test.steps.lastIndexOf(definition.name), 1);
            }
          },
        });
      };
    },
  });
}

type TestFn = (t: Deno.TestContext) => void | Promise<void>;

function bounded(name: string, where: string, fn: TestFn): TestFn {
  return async (t) => {
    const test: Running = { name, where, steps: [], waits: new Map() };
    running = test;
    progress("start", test);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const overran = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const message = describe(test);
        console.error(`watchdog: ${message}`);
        progress("end", test, "overran");
        reject(new Error(message));
      }, LIMIT_MS);
    });
    try {
      await Promise.race([fn(watchSteps(t, test)), overran]);
      progress("end", test, "ok");
    } catch (error) {
      if (!/overran its/.test(String((error as Error)?.message))) progress("end", test, "failed");
      throw error;
    } finally {
      clearTimeout(timer);
      if (running === test) running = undefined;
    }
  };
}

/** Deno.test's overloads, reduced to one definition whose fn is bounded. */
function boundedDefinition(args: unknown[]): Deno.TestDefinition {
  const where = caller();
  let definition: Deno.TestDefinition;
  if (typeof args[0] === "string") {
    definition = typeof args[1] === "function"
      ? { name: args[0], fn: args[1] as TestFn }
      : { ...(args[1] as object), name: args[0], fn: args[2] as TestFn };
  } else if (typeof args[0] === "function") {
    definition = { name: args[0].name, fn: args[0] as TestFn };
  } else {
    definition = typeof args[1] === "function"
      ? { ...(args[0] as Omit<Deno.TestDefinition, "fn">), fn: args[1] as TestFn }
      : args[0] as Deno.TestDefinition;
  }
  return { ...definition, fn: bounded(definition.name, where, definition.fn) };
}

const register = Deno.test;
const watched = ((...args: unknown[]) => register(boundedDefinition(args))) as typeof Deno.test;
watched.ignore =
  ((...args: unknown[]) =>
    register({ ...boundedDefinition(args), ignore: true })) as typeof Deno.test.ignore;
watched.only =
  ((...args: unknown[]) =>
    register({ ...boundedDefinition(args), only: true })) as typeof Deno.test.only;
Object.defineProperty(Deno, "test", { value: watched, configurable: true, writable: true });
