// What an app-fixture test holds open while it runs (fixture-app.ts): the local font server, a
// headless Chromium, and the app's server, under `next dev` or after `next build` under
// `next start`, with one set of secrets and the embedded PGlite in the app's .durable/.
//
//   const session = await FixtureSession.open(app);
//   await session.dev();            // or: await session.buildAndStart();
//   await orderToCompletion(session.server!, session.secrets, session.browser, "order-1");
//   await session.close();          // in afterAll: servers, browser, fonts, and the temp dirs
import { rmSync } from "node:fs";
import path from "node:path";
import { type Browser, chromium } from "playwright-core";
import { CHROMIUM, CHROMIUM_FLAGS } from "./chromium";
import { makeSecrets } from "./durable-client";
import { scriptArgs, startFontServer } from "./fixture-app";
import { buildApp, type NextServer, startNext, startNextDev } from "./next-server";

export class FixtureSession {
  readonly secrets = makeSecrets();
  server: NextServer | undefined;

  private constructor(
    readonly app: string,
    readonly browser: Browser,
    private readonly fonts: Awaited<ReturnType<typeof startFontServer>>,
    private readonly dirs: string[],
  ) {}

  /** Opens the font server and the browser for the app in `app`; `close` removes `app` and `more`. */
  static async open(app: string, ...more: string[]): Promise<FixtureSession> {
    const [fonts, browser] = await Promise.all([
      startFontServer(),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS }),
    ]);
    return new FixtureSession(app, browser, fonts, [app, ...more]);
  }

  /** No DATABASE_URL: runs live in the embedded PGlite in the app's .durable/, as a new user's do. */
  private get env(): Record<string, string | undefined> {
    return { ...this.secrets.env, ...this.fonts.env, DATABASE_URL: undefined, DURABLE_DRIVER: undefined };
  }

  /** `next dev` with the flags of the app's own `dev` script. */
  async dev(): Promise<NextServer> {
    await this.stop();
    this.server = await startNextDev({ dir: this.app, env: this.env, args: scriptArgs(this.app, "dev") });
    return this.server;
  }

  /**
   * `next build` from a clean .next (as after a fresh clone: Next 15's dev server writes there too),
   * then `next start`, each with the flags of the app's own scripts.
   */
  async buildAndStart(): Promise<NextServer> {
    await this.stop();
    rmSync(path.join(this.app, ".next"), { recursive: true, force: true });
    await buildApp(this.app, { args: scriptArgs(this.app, "build"), env: this.fonts.env });
    this.server = await startNext({ dir: this.app, env: this.env, args: scriptArgs(this.app, "start") });
    return this.server;
  }

  /** Stops the app's server, if one runs: the next one opens the same .durable/. */
  async stop(): Promise<void> {
    await this.server?.stop();
    this.server = undefined;
  }

  async close(): Promise<void> {
    await this.stop();
    await this.browser.close();
    await this.fonts.close();
    for (const dir of this.dirs) rmSync(dir, { recursive: true, force: true });
  }
}
