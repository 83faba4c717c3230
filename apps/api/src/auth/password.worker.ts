import { parentPort } from 'node:worker_threads';
import { hashSync, verifySync } from '@node-rs/argon2';
import type { PasswordAnswer, PasswordTask } from './password-pool';

/** argon2id, as @node-rs/argon2 numbers its algorithms (a const enum, which transpile-only loading cannot inline). */
const ARGON2ID = 2;

// One password thread (password-pool.ts). argon2 is called *synchronously* here, so a verification
// occupies this thread only, never libuv's shared pool.
parentPort!.on('message', (task: PasswordTask) => {
  let answer: PasswordAnswer;
  try {
    answer = { result: task.op === 'verify' ? verifySync(task.hash, task.password) : hashSync(task.password, { algorithm: ARGON2ID, ...task.params }) };
  } catch (e) {
    answer = { error: String((e as Error)?.message ?? e) };
  }
  parentPort!.postMessage(answer);
});
