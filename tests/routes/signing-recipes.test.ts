// The signing recipes of docs/guide/signals-and-webhooks.md ("Signing without a library") run as
// written: each file is copied out of the page, run as a user runs it (tsx; bash with curl and
// openssl) against the signal route served over HTTP, and its signal reaches the run.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../e2e/helpers/next-server";
import { approval, createFixture, type RouteFixture, SECRETS, whsec } from "./harness";

const run = promisify(execFile);
const PAGE = path.join(REPO_ROOT, "docs/guide/signals-and-webhooks.md");

/** The code block that follows `<!-- recipe: name -->` on the page. */
function recipe(name: string): string {
  const page = readFileSync(PAGE, "utf8");
  const match = new RegExp(`<!-- recipe: ${name.replace(".", "\\.")} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(
    page,
  );
  if (!match) throw new Error(`${PAGE} has no recipe ${name}`);
  return `${match[1]}\n`;
}

describe("the signing recipes of the guide", () => {
  let fixture: RouteFixture;
  let server: http.Server;
  let appUrl: string;
  const dir = mkdtempSync(path.join(os.tmpdir(), "durable-signing-recipes-"));

  beforeAll(async () => {
    fixture = await createFixture();
    // The signal route over real HTTP: the recipes' curl and fetch send real requests.
    server = http.createServer(async (incoming, outgoing) => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      const request = new Request(new URL(incoming.url ?? "/", "http://127.0.0.1"), {
        method: incoming.method,
        headers: incoming.headers as Record<string, string>,
        body: incoming.method === "POST" ? Buffer.concat(chunks) : undefined,
      });
      const response = await fixture.routes.signal.POST(request);
      outgoing.writeHead(response.status, Object.fromEntries(response.headers));
      outgoing.end(Buffer.from(await response.arrayBuffer()));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    appUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    writeFileSync(path.join(dir, "send-signal.mts"), recipe("send-signal.mts"));
    writeFileSync(path.join(dir, "send-signal.sh"), recipe("send-signal.sh"));
  });

  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await fixture?.routes.idle();
    await fixture?.durable.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (secret: string) => ({ ...process.env, APP_URL: appUrl, DURABLE_SIGNAL_SECRET: secret });
  const commands = {
    "send-signal.mts": (args: string[], secret: string) =>
      run(path.join(REPO_ROOT, "node_modules/.bin/tsx"), [path.join(dir, "send-signal.mts"), ...args], {
        cwd: dir,
        env: env(secret),
      }),
    "send-signal.sh": (args: string[], secret: string) =>
      run("bash", [path.join(dir, "send-signal.sh"), ...args], { cwd: dir, env: env(secret) }),
  };

  for (const [name, send] of Object.entries(commands)) {
    it(`${name} delivers a signal the route accepts, and a wrong key is refused`, async () => {
      const id = `doc-${name.replace(/\W/g, "-")}`;
      await fixture.durable.start(approval, { docId: id }, { id });
      await fixture.durable.advance(id);
      expect(await fixture.durable.status(id)).toMatchObject({ status: "waiting", waitingFor: { kind: "signal" } });

      // Signed with another key: 401, and the run still waits.
      const forged = await send([id, "decision", '{"approved":true}'], whsec(Buffer.from("not-the-app-key"))).then(
        () => null,
        (error: { stdout: string; stderr: string }) => `${error.stdout}${error.stderr}`,
      );
      expect(forged).toMatch(/401/);

      const { stdout } = await send([id, "decision", '{"approved":true}'], SECRETS.signal);
      expect(stdout).toMatch(/"signalled":true/);
      await fixture.routes.idle(); // the route advances the run after its answer
      expect(await fixture.durable.status(id)).toMatchObject({ status: "completed", output: { approved: true } });
    }, 60_000);
  }
});
