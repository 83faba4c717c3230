import { parentPort, type MessagePort, type Worker } from 'node:worker_threads';
import type { DirectCopyRequest } from './direct-copy';
import { ThreadRecords, copyBatch } from './direct-copy-records';
import { startWorkerScript } from '@gateway/concurrency';

/**
 * Copied documents go on to the records thread in groups of this many (and the rest at the end of
 * a message); the records thread commits each group's records together and answers it: soon enough
 * that the event loop goes on with the documents while this thread copies the next ones, few
 * enough per group that a group's records share a commit.
 */
const FORWARD_EVERY = 16;

/** This thread's connections to the targets' records: the look-ups before a copy (the records thread writes). */
const records = new ThreadRecords();
let recorder: Worker | undefined;

/**
 * What the event loop sends (direct-copy-thread.ts): first the port the records thread answers on,
 * then batches of requests, or a connector instance's records to close (after the copies sent before).
 */
export type CopyThreadMessage = Array<[number, DirectCopyRequest]> | { close: string } | { answers: MessagePort };

// The copy thread (direct-copy-thread.ts).
parentPort!.on('message', (message: CopyThreadMessage) => {
  if ('answers' in message) {
    recorder = startRecorder(message.answers);
  } else if (Array.isArray(message)) {
    copyBatch(message, records, (items) => recorder!.postMessage(items), FORWARD_EVERY);
  } else {
    records.close(message.close);
    recorder!.postMessage(message);
  }
});

/** The records thread (direct-copy-records.worker.ts), answering the event loop on `answers`. */
function startRecorder(answers: MessagePort): Worker {
  const worker = startWorkerScript(__dirname, 'direct-copy-records.worker', { workerData: { answers }, transferList: [answers] });
  // Without it the copies sent on would never be answered: this thread ends too, and the event loop
  // answers the copies it had `lost` (direct-copy-thread.ts).
  const end = () => process.exit(1);
  worker.on('error', end);
  worker.on('exit', end);
  return worker;
}
