export { ContentTransport, MAX_ERROR_BODY_BYTES, readSmall, type ContentAnswer, type ContentTarget, type ContentTransportOptions } from './content-transport';
