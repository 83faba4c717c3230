export { LentReadConnection, spareSlabCount, type ChunkLender } from './lent-reads';
export { MAX_HEADER_BYTES, RawHttpTimeout, rawGet, readSmall, targetOf, type RawAnswer, type RawGetOptions, type RawTarget } from './raw-get';
export { SlabPool, type Slab } from './slab-pool';
