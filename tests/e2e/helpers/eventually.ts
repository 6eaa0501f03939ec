/**
 * Polls `read` (every `everyMs`, 50 by default) until it answers a value other than undefined or
 * false, and returns it; fails after `timeoutMs` naming `what` it waited for. For conditions of a
 * page or a server, which a loaded machine reaches later: generous timeouts cost nothing once met.
 */
export async function eventually<T>(
  read: () => Promise<T | undefined | false>,
  { timeoutMs = 60_000, everyMs = 50, what }: { timeoutMs?: number; everyMs?: number; what: string },
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`waited ${timeoutMs} ms for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
