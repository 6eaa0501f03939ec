// A vitest global setup (vitest.config.ts): a temp folder for this run, given to the test files as
// inject("e2eRunDir") and removed when the run ends. tests/e2e/helpers/run-cache.ts keeps there
// what must be made fresh each run but only once in it (a fixture app's npm install).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    e2eRunDir: string;
  }
}

export default function setup(project: TestProject) {
  const dir = mkdtempSync(path.join(os.tmpdir(), "durable-e2e-run-"));
  project.provide("e2eRunDir", dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
