// npm run bench's options (scripts/bench.ts lists them).
import { PEER_JOBS, PEER_ROUNDS } from "./peer-contender";

const SCALE_RUNS = 2_000;
type Section =
  | "core"
  | "children"
  | "scale"
  | "tracing"
  | "retention"
  | "peers"
  | "operations"
  | "flow"
  | "priority-walk"
  | "encryption"
  | "events"
  | "metrics";
const SECTIONS: readonly Section[] = [
  "core",
  "children",
  "scale",
  "tracing",
  "retention",
  "peers",
  "operations",
  "flow",
  "priority-walk",
  "encryption",
  "events",
  "metrics",
];

interface Options {
  only: Section | null;
  scaleRuns: number;
  peerJobs: number;
  peerRounds: number;
  /** --rtt: the peers section through the delaying proxy, adding this many ms a round trip. */
  rttMs: number | null;
}

/**
 * `--core` (sections 1–4 only), `--children` (section 1's parent of 10 children only), `--scale`
 * (section 5 only), `--tracing` (section 6 only), `--retention` (section 7 only), `--peers`
 * (section 8 only), `--operations` (section 9 only), `--flow` (section 10 only), `--priority-walk`
 * (section 11 only), `--encryption` (section 12 only), `--events` (section 13 only),
 * `--metrics` (section 14 only), `--scale-runs N`,
 * and for section 8 `--peer-jobs N`, `--peer-rounds N` and `--rtt <ms>`; anything else is refused.
 */
export function parseOptions(args: string[]): Options {
  // The options that take a number: what they set, and the least they accept (whole numbers unless `fraction`).
  const NUMBER_OPTIONS = {
    "--scale-runs": { key: "scaleRuns", min: 1, fraction: false, what: "runs" },
    "--peer-jobs": { key: "peerJobs", min: 1, fraction: false, what: "jobs" },
    "--peer-rounds": { key: "peerRounds", min: 1, fraction: false, what: "rounds" },
    "--rtt": { key: "rttMs", min: 0, fraction: true, what: "milliseconds" },
  } as const;
  const parsed: Options = {
    only: null,
    scaleRuns: SCALE_RUNS,
    peerJobs: PEER_JOBS,
    peerRounds: PEER_ROUNDS,
    rttMs: null,
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const section = SECTIONS.find((s) => arg === `--${s}`);
    const name = Object.keys(NUMBER_OPTIONS).find((n) => arg === n || arg.startsWith(`${n}=`));
    if (section) parsed.only = section;
    else if (name) {
      const option = NUMBER_OPTIONS[name as keyof typeof NUMBER_OPTIONS];
      const value = arg.includes("=") ? arg.slice(arg.indexOf("=") + 1) : args[++i];
      const n = Number(value);
      if (
        value === undefined ||
        value === "" ||
        !Number.isFinite(n) ||
        n < option.min ||
        (!option.fraction && !Number.isInteger(n))
      ) {
        const kind = option.fraction ? "a number of" : "a whole number of";
        console.error(`${name} takes ${kind} ${option.what} >= ${option.min}, not ${JSON.stringify(value)}`);
        process.exit(2);
      }
      parsed[option.key] = n;
    } else {
      console.error(
        `unknown option ${arg}: npm run bench ` +
          "[-- --core | --children | --scale | --tracing | --retention | --peers | --operations | --flow | " +
          "--priority-walk | --encryption | --events | --metrics] " +
          "[--scale-runs N] [--peer-jobs N] [--peer-rounds N] [--rtt <ms>]",
      );
      process.exit(2);
    }
  }
  return parsed;
}
