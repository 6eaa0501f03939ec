import { describe, expect, it } from "vitest";
import * as errors from "@/lib/durable/errors";
import {
  CallbackNotFoundError,
  ChildRunFailedError,
  DecryptionError,
  DuplicateStepIdError,
  DurableError,
  FatalStepError,
  InvalidInputError,
  LeaseLostError,
  ResultTooLargeError,
  RetryableStepError,
  RunNotFoundError,
  RunStateConflictError,
  StepKindMismatchError,
  StepLeaseLostError,
  StepNotReplaySafeError,
  StepTimeoutError,
  UnauthorizedError,
  WorkflowNotFoundError,
  serializeError,
} from "@/lib/durable/errors";
import { errorBody, httpStatusOf } from "@/lib/durable/http/error-response";

// One instance of every class, with its expected name, code and HTTP status.
const samples: Array<[DurableError, string, string, number]> = [
  [new DurableError("custom_code", "base"), "DurableError", "custom_code", 500],
  [new FatalStepError("no"), "FatalStepError", "fatal_step", 500],
  [new RetryableStepError("later"), "RetryableStepError", "retryable_step", 500],
  [new DuplicateStepIdError("a"), "DuplicateStepIdError", "duplicate_step_id", 500],
  [new StepKindMismatchError("a", "run", "tx"), "StepKindMismatchError", "step_kind_mismatch", 500],
  [new StepNotReplaySafeError("a", null, "wfe-x"), "StepNotReplaySafeError", "step_not_replay_safe", 500],
  [new StepTimeoutError("slow"), "StepTimeoutError", "step_timeout", 500],
  [new StepLeaseLostError("gone"), "StepLeaseLostError", "step_lease_lost", 500],
  [new ResultTooLargeError({ bytes: 2, limit: 1 }), "ResultTooLargeError", "result_too_large", 500],
  [new RunNotFoundError("r"), "RunNotFoundError", "run_not_found", 404],
  [new WorkflowNotFoundError("w"), "WorkflowNotFoundError", "workflow_not_found", 404],
  [new InvalidInputError("bad"), "InvalidInputError", "invalid_input", 422],
  [new UnauthorizedError(), "UnauthorizedError", "unauthorized", 401],
  [new RunStateConflictError("terminal"), "RunStateConflictError", "run_state_conflict", 409],
  [
    new ChildRunFailedError({ childId: "c", childStatus: "failed", error: null }),
    "ChildRunFailedError",
    "child_run_failed",
    500,
  ],
  [new CallbackNotFoundError(), "CallbackNotFoundError", "callback_not_found", 404],
  [new DecryptionError({ keyId: "k1", reason: "missing_key" }), "DecryptionError", "decryption_failed", 500],
];

// A deprecated name exported as another class's alias counts once.
const classes = [
  ...new Set(
    Object.values(errors).filter(
      (v): v is typeof DurableError => typeof v === "function" && v.prototype instanceof Error,
    ),
  ),
];

describe("error classes", () => {
  it("keeps the deprecated LeaseLostError name working as the class a superseded owner sees", () => {
    expect(LeaseLostError).toBe(StepLeaseLostError);
    expect(LeaseLostError.is(new StepLeaseLostError("gone"))).toBe(true);
  });

  it("covers every exported class in the samples", () => {
    expect(classes.map((c) => c.name).sort()).toEqual(samples.map(([, name]) => name).sort());
  });

  it.each(samples)("%s has its name, code and status, and is recognised", (err, name, code, status) => {
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(DurableError);
    expect(err.name).toBe(name);
    expect(err.code).toBe(code);
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    expect(httpStatusOf(err)).toBe(status);
    expect(DurableError.is(err)).toBe(true);
    const own = classes.find((c) => c.name === name)!;
    expect(own.is(err)).toBe(true);
    expect(err.stack).toContain(name);
  });

  it("each subclass's is() accepts only its own kind", () => {
    for (const cls of classes.filter((c) => c !== DurableError)) {
      const matches = samples.filter(([err]) => cls.is(err)).map(([, name]) => name);
      expect(matches).toEqual([cls.name]);
    }
  });

  it("is() works by name across realms and bundles, without instanceof", () => {
    const foreign = { name: "DuplicateStepIdError", code: "duplicate_step_id", message: "x", stepId: "a" };
    expect(DuplicateStepIdError.is(foreign)).toBe(true);
    expect(DurableError.is(foreign)).toBe(true);
    expect(FatalStepError.is(foreign)).toBe(false);
  });

  it("DurableError.is rejects errors outside the taxonomy", () => {
    for (const v of [
      new Error("x"),
      new TypeError("x"),
      { name: "FatalStepError" },
      { name: "Other", code: "x" },
      null,
      undefined,
      "FatalStepError",
      42,
    ]) {
      expect(DurableError.is(v)).toBe(false);
    }
    expect(FatalStepError.is(null)).toBe(false);
    expect(FatalStepError.is("FatalStepError")).toBe(false);
  });

  it("keeps the cause", () => {
    const root = new Error("root");
    expect(new FatalStepError("no", { cause: root }).cause).toBe(root);
    expect(new RunNotFoundError("r", { cause: root }).cause).toBe(root);
    expect(new InvalidInputError("bad", { cause: root, issues: [] }).cause).toBe(root);
    expect(new FatalStepError("no").cause).toBeUndefined();
  });
});

describe("error fields and messages", () => {
  it("RetryableStepError carries retryAfter when given", () => {
    expect(new RetryableStepError("429", { retryAfter: "30s" }).retryAfter).toBe("30s");
    expect(new RetryableStepError("429", { retryAfter: 500 }).retryAfter).toBe(500);
    expect(new RetryableStepError("429").retryAfter).toBeUndefined();
  });

  it("DuplicateStepIdError names the step", () => {
    const e = new DuplicateStepIdError("notify");
    expect(e.stepId).toBe("notify");
    expect(e.message).toContain('"notify"');
  });

  it("StepKindMismatchError names the step and both kinds", () => {
    const e = new StepKindMismatchError("s1", "run", "sleep");
    expect([e.stepId, e.expected, e.actual]).toEqual(["s1", "run", "sleep"]);
    expect(e.message).toBe('step "s1" is recorded as a "run" step but was asked for as a "sleep" step');
  });

  it("StepNotReplaySafeError names the step, the lease expiry and the external key", () => {
    const at = new Date("2025-01-02T03:04:05.000Z");
    const e = new StepNotReplaySafeError("charge", at, "wfe-0123456789abcdef0123456789abcdef");
    expect(e.stepId).toBe("charge");
    expect(e.leaseExpiredAt).toBe(at);
    expect(e.externalKey).toBe("wfe-0123456789abcdef0123456789abcdef");
    expect(e.message).toContain('"charge"');
    expect(e.message).toContain("2025-01-02T03:04:05.000Z");
    expect(e.message).toContain("wfe-0123456789abcdef0123456789abcdef");
    expect(new StepNotReplaySafeError("charge", null, "wfe-1").message).toContain("unknown time");
  });

  it("ResultTooLargeError reports bytes and limit, with or without a step", () => {
    const e = new ResultTooLargeError({ stepId: "big", bytes: 2_000_000, limit: 1_048_576 });
    expect([e.stepId, e.bytes, e.limit]).toEqual(["big", 2_000_000, 1_048_576]);
    expect(e.message).toBe('result of step "big" is 2000000 bytes as JSON, over the limit of 1048576 bytes');
    const anon = new ResultTooLargeError({ bytes: 10, limit: 5 });
    expect(anon.stepId).toBeUndefined();
    expect(anon.message).toBe("result is 10 bytes as JSON, over the limit of 5 bytes");
  });

  it("RunNotFoundError, WorkflowNotFoundError and InvalidInputError keep their data", () => {
    expect(new RunNotFoundError("doc-42").runId).toBe("doc-42");
    expect(new RunNotFoundError("doc-42").message).toContain('"doc-42"');
    expect(new WorkflowNotFoundError("approval").workflow).toBe("approval");
    expect(new WorkflowNotFoundError("approval").message).toContain('"approval"');
    const issues = [{ path: ["docId"], message: "Required" }];
    expect(new InvalidInputError("bad input", { issues }).issues).toBe(issues);
    expect(new InvalidInputError("bad input").issues).toBeUndefined();
  });
});

describe("httpStatusOf", () => {
  it("maps anything outside the taxonomy to 500", () => {
    expect(httpStatusOf(new Error("x"))).toBe(500);
    expect(httpStatusOf("run_not_found")).toBe(500);
    expect(httpStatusOf({ code: "run_not_found", name: "Error" })).toBe(500);
    expect(httpStatusOf(undefined)).toBe(500);
  });

  it("maps a foreign-realm taxonomy error by its code", () => {
    expect(httpStatusOf({ name: "RunNotFoundError", code: "run_not_found", message: "m" })).toBe(404);
  });
});

describe("errorBody", () => {
  it("exposes the code and message of taxonomy errors", () => {
    expect(errorBody(new RunNotFoundError("doc-42"))).toEqual({
      error: { code: "run_not_found", message: 'run "doc-42" not found' },
    });
  });

  it("never leaks other errors", () => {
    const secret = new Error("password=hunter2 at db.internal:5432");
    for (const e of [secret, "oops", null, { message: "secret" }]) {
      expect(errorBody(e)).toEqual({ error: { code: "internal", message: "internal error" } });
    }
    expect(JSON.stringify(errorBody(secret))).not.toContain("hunter2");
  });
});

describe("serializeError", () => {
  it("keeps a taxonomy error's code, message and name", () => {
    expect(serializeError(new FatalStepError("card declined"))).toEqual({
      code: "fatal_step",
      message: "card declined",
      name: "FatalStepError",
    });
  });

  it("gives a plain Error code 'error' with its name and message", () => {
    expect(serializeError(new TypeError("x is not a function"))).toEqual({
      code: "error",
      message: "x is not a function",
      name: "TypeError",
    });
    class PaymentError extends Error {
      override name = "PaymentError";
    }
    expect(serializeError(new PaymentError("nope"))).toEqual({ code: "error", message: "nope", name: "PaymentError" });
  });

  it("treats error-like objects from another realm as errors", () => {
    expect(serializeError({ name: "RangeError", message: "too far" })).toEqual({
      code: "error",
      message: "too far",
      name: "RangeError",
    });
  });

  it("stringifies thrown non-errors", () => {
    expect(serializeError("boom")).toEqual({ code: "error", message: "boom", name: "NonError" });
    expect(serializeError(42)).toEqual({ code: "error", message: "42", name: "NonError" });
    expect(serializeError(undefined)).toEqual({ code: "error", message: "undefined", name: "NonError" });
    expect(serializeError(null).message).toBe("null");
    expect(serializeError({ a: 1 }).message).toBe("[object Object]");
  });

  it("survives values whose String() throws", () => {
    expect(serializeError(Object.create(null)).message).toBe("[object Object]");
  });

  it("replaces NUL characters, which Postgres cannot store", () => {
    const s = serializeError(new Error("a\u0000b"));
    expect(s.message).toBe("a\uFFFDb");
    expect(serializeError("x\u0000").message).not.toContain("\u0000");
  });
});
