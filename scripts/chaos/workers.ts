// Chaos workers as child processes, so SIGKILL, SIGSTOP and SIGCONT are real.
import { spawn, type ChildProcess } from "node:child_process";

export interface Worker {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>;
  /** What it printed so far. */
  output(): string;
  paused: boolean;
}

export function spawnWorker(url: string, env: Record<string, string> = {}): Worker {
  const args = ["--import", "tsx"];
  if (env.CLOCK_SKEW_MS) args.push("--import", "./scripts/chaos/skew-clock.mjs");
  const child = spawn(process.execPath, [...args, "scripts/chaos/worker.ts"], {
    env: { ...process.env, CHAOS_URL: url, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, output })),
  );
  return { child, exited, output: () => output, paused: false };
}
