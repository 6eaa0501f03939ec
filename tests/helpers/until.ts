/**
 * Waits (polling every 5 ms) until `condition` holds (it may be async); fails after `timeoutMs`,
 * which is generous: on a loaded machine a condition takes longer, and a wait that holds costs no
 * more for being allowed longer.
 */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}
