import { parentPort } from 'node:worker_threads';
import type { DirectCopyRequest } from './direct-copy';
import { ThreadRecords, answerBatch } from './direct-copy-records';

/**
 * Results go back in groups of this many (and the rest at the end of a batch), each group once its
 * records are committed: soon enough that the event loop goes on with the documents while this
 * thread copies the next ones (answering a whole batch at once left one side idle while the other
 * worked), few enough per group that a group's records share a commit.
 */
const ANSWER_EVERY = 16;

const records = new ThreadRecords();

/** What the event loop sends (direct-copy-thread.ts): a batch of requests, or a connector instance's records to close. */
export type CopyThreadMessage = Array<[number, DirectCopyRequest]> | { close: string };

// The copy thread (direct-copy-thread.ts).
parentPort!.on('message', (message: CopyThreadMessage) => {
  if (!Array.isArray(message)) return records.close(message.close);
  answerBatch(message, records, (answers) => parentPort!.postMessage(answers), ANSWER_EVERY);
});
