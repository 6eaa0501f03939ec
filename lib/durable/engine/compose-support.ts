// What the composition steps (steps/child-steps.ts, steps/callback-steps.ts) need from the
// instance: a child run prepared as `start` prepares one, and the tokens and URLs derived from
// DURABLE_SECRET. Read lazily, so a run that never starts a child or makes a callback never needs
// the secret.
import { callbackTokenFor } from "../auth/callback-token";
import { resolveSecret } from "../auth/secrets";
import { statusTokenFor } from "../auth/status-token";
import type { PayloadCodec } from "../encryption/payload-codec";
import { InvalidInputError } from "../errors";
import type { AnyWorkflow, Duration } from "../types";
import type { WorkflowRegistry } from "./define-workflow";
import { checkPlainStorable } from "./payloads";
import { type PreparedRun, prepareRun } from "./prepare-run";

export interface ComposeSupport {
  prepare(workflow: AnyWorkflow, input: unknown, id: string, deadline?: Duration): PreparedRun;
  statusToken(runId: string): string;
  callbackToken(callbackId: string): string;
  /** `<origin>/api/durable/callback/<token>`. */
  callbackUrl(token: string): string;
}

export function createComposeSupport(options: {
  registry: WorkflowRegistry;
  maxResultBytes: number;
  secret: string | undefined;
  baseUrl: string | undefined;
  log: (message: string) => void;
  /** The instance's payload codec: without a sealing key, an input holding the envelope prefix is refused. */
  codec?: PayloadCodec;
}): ComposeSupport {
  const secret = () => resolveSecret("durable", options.secret, options.log);
  const origin = callbackOrigin(options.baseUrl);
  return {
    prepare: (workflow, input, id, deadline) => {
      const run = prepareRun(options.registry, options.maxResultBytes, workflow, input, id, deadline);
      // Refused here, not when the suspension that inserts it is written (engine/payloads.ts).
      if (options.codec) checkPlainStorable(options.codec, run.inputJson, `the input of child run "${run.id}"`);
      return run;
    },
    statusToken: (runId) => statusTokenFor(secret(), runId),
    callbackToken: (callbackId) => callbackTokenFor(secret(), callbackId),
    callbackUrl: (token) => `${origin()}/api/durable/callback/${token}`,
  };
}

/** The origin of callback URLs: `baseUrl`, DURABLE_BASE_URL, https://VERCEL_URL, or localhost. */
function callbackOrigin(baseUrl: string | undefined): () => string {
  if (baseUrl !== undefined) {
    const checked = originOf(baseUrl);
    return () => checked;
  }
  return () => {
    const fromEnv = process.env.DURABLE_BASE_URL;
    if (fromEnv) return originOf(fromEnv);
    if (process.env.VERCEL_URL) return `https://${process.env.VERCEL_URL}`;
    return `http://localhost:${process.env.PORT ?? 3000}`;
  };
}

function originOf(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(`baseUrl ${JSON.stringify(url)} is not a URL (e.g. "https://shop.example.com")`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new InvalidInputError(`baseUrl ${JSON.stringify(url)} is not an http(s) URL`);
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}
