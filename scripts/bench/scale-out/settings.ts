// The scale-out bench's sizes and timings (scripts/bench/scale-out.ts).
export const PROVIDER_MS = 200;
export const KEY_LIMIT = 2;
export const TENANTS = 4;
export const KEYED_RUNS = 200;
export const WORKER_CONCURRENCY = 32;
export const TICK_CONCURRENCY = 8;
export const MAX_FAN_OUT = 4;
export const LATENCY_SAMPLES = 100;
export const LATENCY_WARMUP = 10;
/** How often durable_runs is sampled while a backlog drains (ms). */
export const SAMPLE_MS = 20;
export const STARTERS = 8;
