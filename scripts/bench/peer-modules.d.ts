// The part of graphile-worker's, pg-boss's and DBOS's APIs the bench's peers section uses, for the type
// check of a checkout without them: they are installed only when `npm run bench -- --peers` runs
// (scripts/bench/peer-packages.ts), so `tsc` must pass without their own declarations. Where they
// are installed, the packages' declarations are what the compiler resolves, and these go unused.

declare module "graphile-worker" {
  type LogFunction = (level: string, message: string, meta?: unknown) => void;
  export class Logger {
    constructor(factory: (scope: unknown) => LogFunction);
  }
  export interface JobHelpers {
    job: { id: string | number };
    query(text: string, values?: unknown[]): Promise<unknown>;
  }
  type Task = (payload: unknown, helpers: JobHelpers) => Promise<void> | void;
  interface RunOptions {
    connectionString?: string;
    pgPool?: unknown;
    concurrency?: number;
    noHandleSignals?: boolean;
    logger?: Logger;
    preset?: unknown;
    taskList?: Record<string, Task>;
  }
  interface WorkerUtils {
    addJob(identifier: string, payload?: unknown): Promise<unknown>;
    release(): Promise<void>;
  }
  export interface Runner {
    addJob(identifier: string, payload?: unknown): Promise<unknown>;
    stop(): Promise<void>;
  }
  export function runMigrations(options: RunOptions): Promise<void>;
  export function makeWorkerUtils(options: RunOptions): Promise<WorkerUtils>;
  export function run(options: RunOptions): Promise<Runner>;
  export function runOnce(options: RunOptions): Promise<void>;
}

declare module "pg-boss" {
  interface Job<T> {
    id: string;
    data: T;
  }
  interface WorkOptions {
    batchSize?: number;
    localConcurrency?: number;
    burstWhenBatchFull?: boolean;
    pollingIntervalSeconds?: number;
  }
  export class PgBoss {
    constructor(options: Record<string, unknown>);
    on(event: "error", listener: (error: Error) => void): this;
    start(): Promise<this>;
    stop(options?: { graceful?: boolean }): Promise<void>;
    createQueue(name: string, options?: Record<string, unknown>): Promise<void>;
    insert(name: string, jobs: { data: unknown }[]): Promise<unknown>;
    send(name: string, data: unknown): Promise<string | null>;
    work<T>(name: string, options: WorkOptions, handler: (jobs: Job<T>[]) => Promise<void>): Promise<string>;
    notifyWorker(id: string): void;
  }
}

declare module "@dbos-inc/dbos-sdk" {
  // biome-ignore lint/complexity/noStaticOnlyClass: DBOS's own API is a class of static members
  export class DBOS {
    static setConfig(config: Record<string, unknown>): void;
    static launch(): Promise<void>;
    static shutdown(): Promise<void>;
    static get workflowID(): string | undefined;
    static registerWorkflow<Args extends unknown[], Return>(
      func: (...args: Args) => Promise<Return>,
      config?: { name?: string },
    ): (...args: Args) => Promise<Return>;
    static runStep<Return>(func: () => Promise<Return>, config?: { name?: string }): Promise<Return>;
    static startWorkflow<Args extends unknown[], Return>(
      target: (...args: Args) => Promise<Return>,
      params?: { queueName?: string; workflowID?: string },
    ): (...args: Args) => Promise<unknown>;
  }
  export class DBOSClient {
    static create(options: {
      systemDatabaseUrl: string;
      applicationName?: string;
      logger?: unknown;
    }): Promise<DBOSClient>;
    enqueue(
      options: { queueName: string; workflowName: string; workflowID?: string; appVersion?: string },
      ...args: unknown[]
    ): Promise<unknown>;
    registerQueue(
      name: string,
      options?: { workerConcurrency?: number; minPollingIntervalMs?: number },
    ): Promise<unknown>;
    destroy(): Promise<void>;
  }
}
