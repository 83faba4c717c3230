/**
 * Waits for `work` at most `ms`: true when it settled in time (resolved or rejected), false when the
 * time ran out first. For shutdown steps that must not hold the process forever (a pool or a client
 * waiting on a server that stopped answering): past the grace, the caller forces its way out.
 */
export async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    work.then(
      () => true,
      () => true,
    ),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}
