import { describe, expect, it, vi } from "vitest";
import { driverKindOf, listenUrlFor } from "@/lib/durable/drivers/connect";

describe("driverKindOf", () => {
  it("uses PGlite without a URL or for memory://", () => {
    expect(driverKindOf(undefined, undefined)).toBe("pglite");
    expect(driverKindOf("", undefined)).toBe("pglite");
    expect(driverKindOf("memory://", undefined)).toBe("pglite");
    expect(driverKindOf("memory://", "pglite")).toBe("pglite");
  });

  it("uses pg for postgres URLs and Neon for *.neon.tech hosts", () => {
    expect(driverKindOf("postgres://u:p@127.0.0.1:5432/test", undefined)).toBe("pg");
    expect(driverKindOf("postgresql://u@db.example.com/x", undefined)).toBe("pg");
    expect(driverKindOf("postgres://u:p@ep-cool-1.us-east-2.aws.neon.tech/db?sslmode=require", undefined)).toBe("neon");
    expect(driverKindOf("postgresql://u@NEON.TECH/db", undefined)).toBe("neon");
  });

  it("lets DURABLE_DRIVER / options.driver pick pg or neon for a postgres URL", () => {
    expect(driverKindOf("postgres://u@127.0.0.1/test", "neon")).toBe("neon");
    expect(driverKindOf("postgres://u@x.neon.tech/test", "pg")).toBe("pg");
    expect(driverKindOf("postgres://u@127.0.0.1/test", "")).toBe("pg");
  });

  it("reads DURABLE_DRIVER from the environment by default", () => {
    const before = process.env.DURABLE_DRIVER;
    process.env.DURABLE_DRIVER = "neon";
    try {
      expect(driverKindOf("postgres://u@127.0.0.1/test")).toBe("neon");
    } finally {
      if (before === undefined) delete process.env.DURABLE_DRIVER;
      else process.env.DURABLE_DRIVER = before;
    }
  });

  it("rejects other URLs and mismatched drivers with a clear error", () => {
    expect(() => driverKindOf("mysql://u@h/db", undefined)).toThrow(/memory:\/\/.*postgres:\/\//);
    expect(() => driverKindOf("./data", undefined)).toThrow(/Unsupported database URL/);
    expect(() => driverKindOf("postgres://u@h/db", "pglite")).toThrow(/pglite/);
    expect(() => driverKindOf(undefined, "neon")).toThrow(/needs a postgres:\/\/ URL/);
    expect(() => driverKindOf("postgres://u@h/db", "mysql")).toThrow(/Unknown database driver/);
  });

  it("does not echo a password in the error", () => {
    expect(() => driverKindOf("mysql://me:s3cret@h/db", undefined)).toThrow(/me:\*\*\*@/);
    expect(() => driverKindOf("mysql://me:s3cret@h/db", undefined)).not.toThrow(/s3cret/);
  });
});

describe("listenUrlFor (where worker mode LISTENs)", () => {
  it("drops Neon's -pooler host suffix: a transaction pooler carries no notifications", () => {
    expect(listenUrlFor("postgres://u:p@ep-cool-1-pooler.us-east-2.aws.neon.tech/db?sslmode=require")).toBe(
      "postgres://u:p@ep-cool-1.us-east-2.aws.neon.tech/db?sslmode=require",
    );
    expect(listenUrlFor("postgres://u@127.0.0.1:5432/test")).toBe("postgres://u@127.0.0.1:5432/test");
    // Only the host: a database or password containing "-pooler." stays as it is.
    expect(listenUrlFor("postgres://u:a-pooler.b@db.example.com/x-pooler.y")).toBe(
      "postgres://u:a-pooler.b@db.example.com/x-pooler.y",
    );
  });

  it("takes an explicit URL, or DATABASE_URL_UNPOOLED beside DATABASE_URL", () => {
    expect(listenUrlFor("postgres://a/x", "postgres://b/x")).toBe("postgres://b/x");
    vi.stubEnv("DATABASE_URL", "postgres://u@pooled.example.com/db");
    vi.stubEnv("DATABASE_URL_UNPOOLED", "postgres://u@direct.example.com/db");
    try {
      expect(listenUrlFor("postgres://u@pooled.example.com/db")).toBe("postgres://u@direct.example.com/db");
      expect(listenUrlFor("postgres://u@other.example.com/db")).toBe("postgres://u@other.example.com/db");
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
