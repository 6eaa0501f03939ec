// What a wing (lib/durable/ai/ is one: docs/layout.md, "The ai/ wing") registers with the core. The
// engine and the step API know a wing only through this data, never by importing it: a wing's
// entry registers itself when it is loaded, and index.ts loads the ai wing for the names it still
// re-exports.
import type { z } from "zod";
import type { Body } from "../steps/effect-steps";
import type { DurableDb, Executor } from "../store";
import type { PayloadCodec } from "../encryption/payload-codec";
import type { StepInfo, StepOptions, StreamWriter } from "../types";
import type { StepHost } from "./run/step-host";

/** The core steps a wing's `ctx.step` member builds on, each writing a held-back receipt first. */
export interface StepParts {
  /** Runs a body as a step of a kind, with the effect-step rules (steps/effect-steps.ts). */
  execute: (id: string, kind: "ai", body: Body, options?: StepOptions) => Promise<any>;
  run: <T>(id: string, fn: (s: StepInfo) => T | Promise<T>, options?: StepOptions) => Promise<any>;
  tx: <T>(id: string, fn: (tx: any, s: StepInfo) => Promise<T>, options?: StepOptions) => Promise<any>;
  waitForSignal: (name: string, options: { id: string }) => Promise<unknown>;
  /** The run's stream writer of the step executing now (`ctx.stream`). */
  stream: (stepId: string) => StreamWriter;
}

/** Wraps a step so that a held-back receipt is written before it starts (steps/step-api.ts). */
export type AfterFlush = <A extends unknown[], R>(step: (...args: A) => Promise<R>) => (...args: A) => Promise<R>;

/** Builds a member of `ctx.step` for one execution. */
export type StepMember = (host: StepHost, parts: StepParts, afterFlush: AfterFlush) => unknown;

/** One item a wing's approval source lists: a decision a person makes inside a wait (a tool call). */
export interface WingApproval {
  /** Unique within the run: the decision row's key, so the first decision on it wins. */
  key: string;
  /** The agent turn that asked for the call. */
  turnId: string;
  toolCallId: string;
  toolName: string;
  /** What the decision is about, opened (the tool call's arguments). */
  input: unknown;
}

/**
 * Waits on a wing's reserved signal that people decide item by item (the ai wing's tool calls):
 * `durable.approvals()` lists the items, `durable.decide()` answers one (engine/approvals.ts).
 */
export interface ApprovalSource {
  /** The reserved signal the waits take. */
  signal: string;
  /** The items of the run waiting for a decision, oldest first; of one wait when `stepId` is given. */
  pending(reader: { db: DurableDb; codec: PayloadCodec }, runId: string, stepId?: string): Promise<WingApproval[]>;
  /** The signal payload that answers `item` with a person's decision. */
  payload(item: WingApproval, decision: { approved: boolean; actor: string; reason: string | null }): unknown;
}

export interface Wing {
  /** One registration per name: loading a wing twice changes nothing. */
  name: string;
  /** Signals every workflow takes, declared or not, each checked by its schema at delivery. */
  signals?: Record<string, z.ZodType>;
  /** Members of `ctx.step` (`ai`), typed by the wing's augmentation of WingSteps (types.ts). */
  steps?: Record<string, StepMember>;
  /**
   * Methods of the Durable facade, each made from the facade (kept for old callers), typed by the
   * wing's augmentation of WingMethods (engine/durable-api.ts). Each answers a promise.
   */
  methods?: Record<string, (durable: any) => (...args: any[]) => Promise<unknown>>;
  /**
   * A store handle over an app's transaction of the wing's ORM (`durable-next/drizzle`'s), for
   * `publish(..., { tx })`; undefined for a value that is not one.
   */
  transaction?: (tx: unknown) => Executor | undefined;
  /** Waits on its reserved signals that people decide in the approvals inbox. */
  approvals?: ApprovalSource;
}

const wings = new Map<string, Wing>();

/** The wings' members of `ctx.step`, made once after each registration (wingStepMembers). */
let stepMembers: ReadonlyMap<string, StepMember> | null = null;

export function registerWing(wing: Wing): void {
  wings.set(wing.name, wing);
  stepMembers = null;
}

/** A store handle over `tx`, an app's transaction of a wing's ORM, if a loaded wing knows it. */
export function wingTransaction(tx: unknown): Executor | undefined {
  for (const wing of wings.values()) {
    const handle = wing.transaction?.(tx);
    if (handle) return handle;
  }
  return undefined;
}

/** The loaded wings' approval sources. */
export function approvalSources(): ApprovalSource[] {
  const sources: ApprovalSource[] = [];
  for (const wing of wings.values()) if (wing.approvals) sources.push(wing.approvals);
  return sources;
}

/** The schema of a signal a wing reserved, if `name` is one. */
export function reservedSignal(name: string): z.ZodType | undefined {
  for (const wing of wings.values()) if (wing.signals && Object.hasOwn(wing.signals, name)) return wing.signals[name];
  return undefined;
}

/**
 * The wings' members of `ctx.step`, by name: advance.ts hands them to the step API, which builds
 * each for its execution, so steps/ knows the registry only as data.
 */
export function wingStepMembers(): ReadonlyMap<string, StepMember> {
  if (stepMembers) return stepMembers;
  const members = new Map<string, StepMember>();
  for (const wing of wings.values())
    for (const [name, build] of Object.entries(wing.steps ?? {})) members.set(name, build);
  stepMembers = members;
  return members;
}

/**
 * The facade with the wings' methods added, each after `beforeCall` as the facade's own methods
 * (a closed instance refuses them all alike).
 */
export function withWingMethods<T extends object>(facade: T, beforeCall: () => void): T {
  for (const wing of wings.values())
    for (const [name, make] of Object.entries(wing.methods ?? {})) {
      const method = make(facade);
      Object.assign(facade, {
        [name]: async (...args: unknown[]) => {
          beforeCall();
          return method(...args);
        },
      });
    }
  return facade;
}
