// What a step result's type becomes once stored; types.ts re-exports it (docs/layout.md, the vocabulary).

/** What a value becomes after a JSON round trip, roughly: Dates to strings, BigInt to strings. */
export type Jsonified<T> = T extends Date
  ? string
  : T extends bigint
    ? string
    : T extends (infer U)[]
      ? Jsonified<U>[]
      : T extends object
        ? { [K in keyof T]: Jsonified<T[K]> }
        : T;
