import { parentPort } from 'node:worker_threads';
import { copyDocumentSync, type DirectCopyRequest, type DirectCopyResult } from './direct-copy';

/**
 * Results go back in groups of this many (and the rest at the end of a batch): soon enough that
 * the event loop records documents while this thread copies the next ones (answering a whole
 * batch at once left one side idle while the other worked), few enough per message that their
 * records share a commit (answering one by one made a metadata commit per document).
 */
const ANSWER_EVERY = 8;

// The copy thread (direct-copy-thread.ts): each message is a batch of requests.
parentPort!.on('message', (batch: Array<[number, DirectCopyRequest]>) => {
  let answers: Array<[number, DirectCopyResult]> = [];
  for (const [id, request] of batch) {
    answers.push([id, copyDocumentSync(request)]);
    if (answers.length === ANSWER_EVERY) {
      parentPort!.postMessage(answers);
      answers = [];
    }
  }
  if (answers.length > 0) parentPort!.postMessage(answers);
});
