import { parentPort } from 'node:worker_threads';
import { copyDocumentSync, type DirectCopyRequest } from './direct-copy';

// A large-copy thread (large-copy-threads.ts): one copy per message, answered with its result.
parentPort!.on('message', (request: DirectCopyRequest) => {
  parentPort!.postMessage(copyDocumentSync(request));
});
