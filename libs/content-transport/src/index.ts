export { ContentTransport, MAX_ERROR_BODY_BYTES, readSmall, type ContentAnswer, type ContentTarget, type ContentTransportOptions } from './content-transport';
export { spareSlabCount, targetOf, type ChunkLender, type LentTarget } from './lent-body';
