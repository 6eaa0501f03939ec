// npm run chaos [-- --full] [--seed N] [--only 4,6]: the chaos scenarios of docs/invariants.md on the real server
// with invariants I1–I10 checked after each (I11–I13 too after scenario 11, child runs). Prints every count and
// violation; exits non-zero on any violation. The reduced scale (default) runs in CI in a few minutes.
import { checkInvariants } from "./chaos/invariants";
import { SCENARIOS, type ScenarioResult } from "./chaos/scenarios";
import { chaosExpectation } from "./chaos/workflow";

const args = process.argv.slice(2);
const full = args.includes("--full");
const seedArg = args.indexOf("--seed");
const seed = seedArg >= 0 ? Number(args[seedArg + 1]) : Math.floor(Math.random() * 2 ** 31);
const onlyArg = args.indexOf("--only");
const only = onlyArg >= 0 ? args[onlyArg + 1]!.split(",") : null;

console.log(`chaos: ${full ? "full" : "reduced (CI)"} scale, seed ${seed} (replay with --seed ${seed})\n`);
let violations = 0;
for (const [key, scenario] of SCENARIOS) {
  if (only && !only.includes(key)) continue;
  const started = performance.now();
  const result: ScenarioResult = await scenario({ full, seed });
  const invariants = [
    ...(await checkInvariants(result.db, result.expectation ?? chaosExpectation)),
    ...((await result.invariants?.(result.db)) ?? []),
  ];
  await result.db.destroy();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const found = result.problems.length + invariants.reduce((sum, inv) => sum + inv.violations.length, 0);
  violations += found;
  console.log(`scenario ${result.id}: ${result.name} (${seconds} s)`);
  console.log(
    `  ${Object.entries(result.counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(" · ")}`,
  );
  for (const inv of invariants) {
    console.log(
      `  ${inv.id.padEnd(4)} ${inv.name.padEnd(62)} checked ${String(inv.checked).padStart(6)}  ` +
        `violations ${inv.violations.length}`,
    );
    for (const v of inv.violations) console.log(`       ✗ ${v}`);
  }
  for (const problem of result.problems) console.log(`  ✗ ${problem}`);
  console.log();
}
console.log(violations === 0 ? "chaos: 0 violations" : `chaos: ${violations} violations`);
process.exit(violations === 0 ? 0 : 1);
