/**
 * Named failpoints for the chaos harness (scripts/chaos): `DURABLE_FAILPOINT=<name>:<action>`
 * with action `kill` (SIGKILL this process), `stop` (SIGSTOP it: the harness resumes it later),
 * `pause` (hang forever), or `throw`. Off, a failpoint is one comparison against null.
 */
let [armedName, armedAction] = parse(process.env.DURABLE_FAILPOINT);

function parse(spec: string | undefined): [string | null, string | null] {
  if (!spec) return [null, null];
  const [name, action = "kill"] = spec.split(":");
  return [name!, action];
}

/** Arms (or with no argument disarms) a failpoint in this process: for the chaos worker. */
export function armFailpoint(spec?: string): void {
  [armedName, armedAction] = parse(spec);
}

/** Whether a failpoint is armed in this process (a step host reads its failpoint as null otherwise). */
export function failpointArmed(): boolean {
  return armedName !== null;
}

export type FailpointName =
  | "claim.after"
  | "receipt.before-write"
  | "run.before-body"
  | "run.after-body"
  | "run.after-receipt"
  | "tx.after-effect"
  | "tx.after-receipt"
  | "tx.after-commit"
  | "finish.before"
  | "finish.after"
  | "start.after-insert"
  | "suspend.before"
  | "suspend.after";

export function failpoint(name: FailpointName): Promise<void> | void {
  if (armedName === null || armedName !== name) return;
  process.stdout.write(`FAILPOINT ${name}\n`);
  if (armedAction === "kill") process.kill(process.pid, "SIGKILL");
  if (armedAction === "stop") {
    armedName = null; // once: after SIGCONT the process goes on and must be refused by the fence
    process.kill(process.pid, "SIGSTOP");
    return;
  }
  if (armedAction === "throw") throw new Error(`failpoint ${name}`);
  return new Promise<void>(() => {});
}
