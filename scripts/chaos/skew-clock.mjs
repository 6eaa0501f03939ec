// Preloaded into a chaos worker (node --import): shifts this process's wall clock by
// CLOCK_SKEW_MS. Leases must not care: only the database clock decides them.
const skew = Number(process.env.CLOCK_SKEW_MS ?? 0);
if (skew !== 0) {
  const RealDate = Date;
  class SkewedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + skew);
      else super(...args);
    }
    static now() {
      return RealDate.now() + skew;
    }
  }
  globalThis.Date = SkewedDate;
}
