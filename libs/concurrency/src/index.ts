export { AbortedWhileQueued, Limiter, mapBounded } from './limiter';
export { settlesWithin } from './settles-within';
export { eventLoopBudget, TurnBudget, TURN_BUDGET_MS } from './turn-budget';
export { TurnBatch } from './turn-batch';
export { startWorkerScript } from './worker-script';
export { KeyedMutex } from './keyed-mutex';
