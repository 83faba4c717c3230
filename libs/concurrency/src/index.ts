export { AbortedWhileQueued, Limiter, mapBounded } from './limiter';
export { settlesWithin } from './settles-within';
