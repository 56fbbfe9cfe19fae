/**
 * The turns of `count` jobs an account queues now, the rule of the fair order, the same in
 * every store: the account's next turn (one past its last job waiting or running), but never
 * before the turn the queue is at (the highest turn running, or with none running the lowest
 * waiting, or 0 for an empty queue). Jobs run lowest turn first, the older first on a tie.
 *
 * So the queue is round-robin by account: an account queueing a thousand jobs at once gives
 * them a thousand successive turns, and an account arriving later starts at the queue's current
 * turn, ahead of all but one of the first account's. Turns are kept in the job records, so the
 * order outlives a restart and holds across the nodes of a cluster; an account that was idle
 * starts at the current turn, never with turns saved up.
 */
export function fairTurns(count: number, queue: { accountLast: number | null; runningMax: number | null; waitingMin: number | null }): number[] {
  const current = queue.runningMax ?? queue.waitingMin ?? 0;
  const first = Math.max(current, queue.accountLast === null ? -Infinity : queue.accountLast + 1);
  return Array.from({ length: count }, (_, i) => first + i);
}
