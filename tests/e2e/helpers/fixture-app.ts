// The apps a new user starts from (tests/fixtures/apps: create-next-app's own output), copied into
// a temp dir and installed for real with npm, and what a user adds to them: a workflow with a sleep
// and a signal, and a client page that watches a run with the status hook.
import { execFile, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { REPO_ROOT } from "./next-server";

export type FixtureName = "create-next-app-16" | "next-15";

const FONT_MOCK = path.join(REPO_ROOT, "tests/e2e/helpers/google-fonts-mock.cjs");

/** A copy of fixture `name` in a fresh temp dir (no node_modules yet). */
export function copyFixture(name: FixtureName): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `durable-e2e-${name}-`));
  cpSync(path.join(REPO_ROOT, "tests/fixtures/apps", name), dir, { recursive: true });
  return dir;
}

/** Runs `npm args…` in `dir`; resolves with its output, rejects with it when npm fails. */
export function npm(dir: string, args: string[], timeoutMs = 300_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", args, {
      cwd: dir,
      env: { ...process.env, npm_config_update_notifier: "false", npm_config_fund: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(output);
      else reject(new Error(`npm ${args.join(" ")} in ${dir} exited with ${code}:\n${output.slice(-4000)}`));
    });
  });
}

/** `npm install` as a user runs it (the registry, with npm's cache first), plus `packages`. */
export const npmInstall = (dir: string, ...packages: string[]) =>
  npm(dir, ["install", "--no-audit", "--no-fund", "--prefer-offline", ...packages]);

/**
 * A local stand-in for fonts.gstatic.com (this machine reaches only the npm registry) and the
 * environment that points next/font at it: the fixtures' layouts load Geist from Google Fonts.
 */
export async function startFontServer() {
  const server = http.createServer((_request, response) => {
    response.writeHead(200, { "content-type": "font/woff2" });
    response.end(Buffer.alloc(64, 1));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    env: { NEXT_FONT_GOOGLE_MOCKED_RESPONSES: FONT_MOCK, DURABLE_E2E_FONT_ORIGIN: origin },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A workflow with a sleep and a signal, as a user writes one; `lib` is where defineWorkflow comes from. */
export const orderWorkflow = (lib: string) => `import { z } from "zod";
import { defineWorkflow } from "${lib}";

export const order = defineWorkflow({
  name: "order",
  input: z.object({ item: z.string() }),
  async run(ctx, input) {
    const placed = await ctx.step.run("place", () => ({ item: input.item, at: new Date().toISOString() }));
    // Longer than a wait the engine sits out in the request (5 s): the run parks, and only a
    // later call wakes it (the local cron under next dev; the page's status reads under next start).
    await ctx.step.sleep("cool-off", "6s");
    const approval = await ctx.step.waitForSignal("approval", {
      timeout: "10m",
      schema: z.object({ by: z.string() }),
    });
    return { item: placed.item, approvedBy: approval?.by ?? null };
  },
});
`;

/** A client page that watches the run named in its URL's fragment with the status hook. */
export const watchPage = (react: string) => `"use client";
import { useEffect, useState } from "react";
import { useDurableRun } from "${react}";

function RunState({ id, token }: { id: string; token: string }) {
  const { run, error } = useDurableRun(id, { token });
  if (!run) return <p data-testid="run">{error ? error.message : "loading"}</p>;
  return (
    <p data-testid="run" data-status={run.status} data-waiting-for={run.waitingFor?.kind ?? ""}>
      {run.status}: {run.steps.filter((s) => s.status === "completed").length} steps done
      {run.output ? \` \${JSON.stringify(run.output)}\` : ""}
    </p>
  );
}

export default function Watch() {
  // Read after hydration: a fragment never reaches the server, so the page itself is static.
  const [target, setTarget] = useState<{ id: string; token: string } | null>(null);
  useEffect(() => {
    const query = new URLSearchParams(window.location.hash.slice(1));
    setTarget({ id: query.get("id") ?? "", token: query.get("token") ?? "" });
  }, []);
  return <main>{target ? <RunState {...target} /> : <p data-testid="run">not hydrated</p>}</main>;
}
`;

/**
 * Adds the order workflow and the watch page to an app whose app/durable.ts has the registry
 * marker that add-to-app and init write; `lib` and `react` are the import paths of the toolkit.
 */
export function addOrderWorkflow(dir: string, { lib, react }: { lib: string; react: string }) {
  mkdirSync(path.join(dir, "app/workflows"), { recursive: true });
  writeFileSync(path.join(dir, "app/workflows/order.ts"), orderWorkflow(lib));
  mkdirSync(path.join(dir, "app/watch"), { recursive: true });
  writeFileSync(path.join(dir, "app/watch/page.tsx"), watchPage(react));
  const instanceFile = path.join(dir, "app/durable.ts");
  const instance = readFileSync(instanceFile, "utf8");
  const marker = "// register your workflows here";
  if (!instance.includes(marker)) throw new Error(`app/durable.ts has no "${marker}" line:\n${instance}`);
  writeFileSync(instanceFile, `import { order } from "./workflows/order";\n${instance.replace(marker, "order,")}`);
}

/** The arguments an app's own npm script passes to `next <command>` ("next dev --turbopack" → ["--turbopack"]). */
export function scriptArgs(dir: string, command: "dev" | "build" | "start"): string[] {
  const scripts = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).scripts ?? {};
  const words = String(scripts[command] ?? `next ${command}`)
    .trim()
    .split(/\s+/);
  if (words[0] !== "next" || words[1] !== command)
    throw new Error(`scripts.${command} is not next ${command}: ${words}`);
  return words.slice(2);
}

/** The `npm install …` commands a tool printed for the user to run, as argument lists. */
export function printedInstalls(output: string): string[][] {
  return [...output.matchAll(/^\s*npm install (.+)$/gm)].map((m) => [
    "install",
    "--no-audit",
    "--prefer-offline",
    ...m[1]!.trim().split(/\s+/),
  ]);
}

/** The release before this one, as users installed it (tests/fixtures/packages; docs/guide/installing.md). */
export function previousTarball(): string {
  const dir = path.join(REPO_ROOT, "tests/fixtures/packages");
  const tarballs = readdirSync(dir).filter((name) => /^durable-next-.*\.tgz$/.test(name));
  if (tarballs.length !== 1) throw new Error(`${dir} should hold one durable-next-*.tgz, not ${tarballs}`);
  return path.join(dir, tarballs[0]!);
}

/** `npx durable-next init` in the app, as its user runs it; resolves with what it printed. */
export const initApp = (dir: string) => npx(dir, ["durable-next", "init"]);

/** `npx args…` in `dir`, from the app's own node_modules/.bin. */
export function npx(dir: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // Not this test run's vitest variables: a vitest started here is the app's own.
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => !key.startsWith("VITEST") && key !== "NODE_ENV"),
    ) as NodeJS.ProcessEnv;
    execFile("npx", ["--no-install", ...args], { cwd: dir, env, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      error ? reject(new Error(`npx ${args.join(" ")} failed:\n${stdout}${stderr}`)) : resolve(`${stdout}${stderr}`),
    );
  });
}
