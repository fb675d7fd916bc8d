/**
 * Polls until the condition holds: for what the service does by itself, in its own time (reconnecting, recovering).
 * The bound is for a condition that never comes; it leaves room for a machine ten times slower than a quiet one.
 */
export async function waitFor(condition: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
