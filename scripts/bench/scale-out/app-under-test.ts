// The app the scale-out bench drives (scripts/bench/scale-out.ts): a minimal app, add-to-app on it, the
// bench's workflows and worker script written into it; and the bench's own definitions of the same names.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { defineWorkflow } from "../../../lib/durable";
import { addToApp, writeMinimalApp } from "../../../tests/e2e/helpers/fresh-app";
import { KEY_LIMIT, PROVIDER_MS } from "./settings";

/** app/workflows/bench.ts of the app under test. */
const APP_WORKFLOWS = `import { z } from "zod";
import { defineWorkflow } from "../../lib/durable";

/** A provider call: the mock provider of the bench (BENCH_PROVIDER_URL) answers after ${PROVIDER_MS} ms. */
async function callProvider(query: string, idempotencyKey: string): Promise<{ ok: boolean }> {
  const base = process.env.BENCH_PROVIDER_URL;
  if (!base) throw new Error("BENCH_PROVIDER_URL is not set");
  const response = await fetch(\`\${base}/call?\${query}\`, {
    method: "POST",
    headers: { "idempotency-key": idempotencyKey },
  });
  if (!response.ok) throw new Error(\`the provider answered \${response.status}\`);
  return (await response.json()) as { ok: boolean };
}

export const providerCall = defineWorkflow({
  name: "provider-call",
  input: z.object({ n: z.number().int() }),
  async run(ctx) {
    return ctx.step.run("call", (s) => callProvider(\`run=\${encodeURIComponent(ctx.runId)}\`, s.externalKey));
  },
});

export const keyedCall = defineWorkflow({
  name: "keyed-call",
  input: z.object({ tenant: z.string(), n: z.number().int() }),
  concurrency: { key: (input) => input.tenant, limit: ${KEY_LIMIT} },
  async run(ctx, input) {
    const query = \`run=\${encodeURIComponent(ctx.runId)}&tenant=\${encodeURIComponent(input.tenant)}\`;
    return ctx.step.run("call", (s) => callProvider(query, s.externalKey));
  },
});

export const threeSteps = defineWorkflow({
  name: "three-steps",
  input: z.object({ n: z.number().int() }),
  async run(ctx, input) {
    const a = await ctx.step.run("one", () => input.n + 1);
    const b = await ctx.step.run("two", () => a + 1);
    return ctx.step.run("three", () => b + 1);
  },
});
`;

/**
 * scripts/bench-worker.ts of the app under test: prints `ready` once the instance is open, waits
 * for a line on stdin, then works until SIGTERM and prints `report <WorkReport>`. `work` is
 * reached through a cast so the app builds whether or not this version of lib/durable has it.
 */
const APP_WORKER = `import { getDurable } from "../app/durable";

type Work = (options: { concurrency?: number; signal?: AbortSignal }) => Promise<unknown>;

async function main() {
  const controller = new AbortController();
  process.once("SIGTERM", () => controller.abort());
  const durable = await getDurable();
  const work = (durable as unknown as { work?: Work }).work;
  if (typeof work !== "function") {
    console.log("no-work");
    process.exit(3);
  }
  console.log("ready");
  await new Promise<void>((resolve) => {
    process.stdin.once("data", () => resolve());
    process.stdin.once("end", () => resolve());
    controller.signal.addEventListener("abort", () => resolve());
  });
  const report = await work.call(durable, {
    concurrency: Number(process.env.BENCH_WORKER_CONCURRENCY),
    signal: controller.signal,
  });
  console.log(\`report \${JSON.stringify(report)}\`);
  process.exit(0);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

/** What the bench starts: the same names, inputs and keys as the app's; the bodies never run here. */
const elsewhere = async (): Promise<never> => {
  throw new Error("the bench only starts runs: the app under test executes them");
};
export const providerCall = defineWorkflow({
  name: "provider-call",
  input: z.object({ n: z.number().int() }),
  run: elsewhere,
});
export const keyedCall = defineWorkflow({
  name: "keyed-call",
  input: z.object({ tenant: z.string(), n: z.number().int() }),
  concurrency: { key: (input) => input.tenant, limit: KEY_LIMIT },
  run: elsewhere,
});
export const threeSteps = defineWorkflow({
  name: "three-steps",
  input: z.object({ n: z.number().int() }),
  run: elsewhere,
});

/** A minimal app, add-to-app on it, the bench's workflows registered in its app/durable.ts. */
export function makeApp(dir: string): void {
  writeMinimalApp(dir);
  const added = addToApp(dir);
  if (added.status !== 0) throw new Error(`add-to-app failed:\n${added.output}`);
  mkdirSync(path.join(dir, "app/workflows"), { recursive: true });
  writeFileSync(path.join(dir, "app/workflows/bench.ts"), APP_WORKFLOWS);
  mkdirSync(path.join(dir, "scripts"), { recursive: true });
  writeFileSync(path.join(dir, "scripts/bench-worker.ts"), APP_WORKER);
  const file = path.join(dir, "app/durable.ts");
  const instance = readFileSync(file, "utf8");
  const marker = "// register your workflows here";
  if (!instance.includes(marker)) throw new Error(`app/durable.ts written by add-to-app has no "${marker}"`);
  writeFileSync(
    file,
    `import { keyedCall, providerCall, threeSteps } from "./workflows/bench";\n` +
      instance.replace(marker, "providerCall, keyedCall, threeSteps,"),
  );
}

export interface Features {
  /** createAppDurable reads DURABLE_TICK_CONCURRENCY. */
  tickConcurrency: boolean;
  /** createDurableRoutes reads DURABLE_MAX_FAN_OUT. */
  fanOut: boolean;
  /** The instance has `work()`. */
  worker: boolean;
}

/** What the copied lib/durable offers, from its source (a missing mode is reported, not faked). */
export function featuresOf(dir: string): Features {
  const lib = path.join(dir, "lib/durable");
  let text = "";
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const child = path.join(at, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith(".ts")) text += readFileSync(child, "utf8");
    }
  };
  walk(lib);
  const instance = readFileSync(path.join(lib, "engine/create-durable.ts"), "utf8");
  return {
    tickConcurrency: text.includes("DURABLE_TICK_CONCURRENCY"),
    fanOut: text.includes("DURABLE_MAX_FAN_OUT"),
    // A method (`work(options) {`) in older releases, a property (`work: (options) =>`) since.
    worker: /^\s+(async\s+)?work\s*[(<:]/m.test(instance),
  };
}
