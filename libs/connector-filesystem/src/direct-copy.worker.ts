import { parentPort } from 'node:worker_threads';
import { copyDocumentSync, type DirectCopyRequest } from './direct-copy';

// The copy thread (direct-copy-thread.ts): each message is a batch of requests; each result goes
// back as soon as it is known, so the event loop records one document while this thread copies
// the next (answering the batch at once left one side idle while the other worked).
parentPort!.on('message', (batch: Array<[number, DirectCopyRequest]>) => {
  for (const [id, request] of batch) parentPort!.postMessage([id, copyDocumentSync(request)]);
});
