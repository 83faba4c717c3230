import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { ThreadRecords, recordBatch, type CopiedItem } from './direct-copy-records';

/**
 * The records thread: started by the copy thread (direct-copy.worker.ts), it writes the first
 * records of the documents the copy thread placed, a group per commit, and answers the event loop
 * on the port it was given. Beside the copy thread, not in it: a record (building it, its share of
 * a look-up and a commit) cost the copy thread about a quarter of its time per small document, which
 * now runs on the other core (libs/connector-filesystem README, "Direct copies").
 */
const answers = (workerData as { answers: MessagePort }).answers;
const records = new ThreadRecords();

parentPort!.on('message', (message: CopiedItem[] | { close: string }) => {
  if (!Array.isArray(message)) return records.close(message.close);
  recordBatch(message, records, (group) => answers.postMessage(group));
});
