/** Waits (polling every 5 ms) until `condition` holds (it may be async); fails after `timeoutMs`. */
export async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 5));
  }
}
