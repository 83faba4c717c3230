export { AbortedWhileQueued, Limiter, mapBounded } from './limiter';
