import { Logger } from '@nestjs/common';
import { EmbeddedTaskQueue } from './embedded-task-queue';
import type { TaskRef, TaskSlot } from './task-queue';

const ref = (key: string): TaskRef => ({ runId: '1_1', key, attempt: 1 });
const turn = () => new Promise((r) => setImmediate(r));

/** A handler whose tasks run until the test ends them; `started` in order. */
function heldTasks() {
  const started: string[] = [];
  const slots = new Map<string, TaskSlot | undefined>();
  const ends = new Map<string, () => void>();
  const handler = (r: TaskRef, slot?: TaskSlot) =>
    new Promise<void>((resolve) => {
      started.push(r.key);
      slots.set(r.key, slot);
      ends.set(r.key, resolve);
    });
  return { started, slots, end: (key: string) => ends.get(key)!(), handler };
}

describe('EmbeddedTaskQueue', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('runs as many tasks at once as it has slots, the next when one returns', async () => {
    const queue = new EmbeddedTaskQueue(2);
    const tasks = heldTasks();
    queue.setHandler(tasks.handler);
    await queue.enqueue([ref('a'), ref('b'), ref('c')]);
    await turn();
    expect(tasks.started).toEqual(['a', 'b']);
    tasks.end('a');
    await turn();
    expect(tasks.started).toEqual(['a', 'b', 'c']);
    tasks.end('b');
    tasks.end('c');
    await queue.drain();
  });

  it('starts the next task once a running one releases its slot, before it returns; releasing again changes nothing', async () => {
    const queue = new EmbeddedTaskQueue(1);
    const tasks = heldTasks();
    queue.setHandler(tasks.handler);
    await queue.enqueue([ref('a'), ref('b'), ref('c')]);
    await turn();
    expect(tasks.started).toEqual(['a']);
    tasks.slots.get('a')!.release();
    await turn();
    expect(tasks.started).toEqual(['a', 'b']);
    // a releases again and returns: its slot was given up once, so c still waits for b.
    tasks.slots.get('a')!.release();
    tasks.end('a');
    await turn();
    expect(tasks.started).toEqual(['a', 'b']);
    tasks.end('b');
    await turn();
    expect(tasks.started).toEqual(['a', 'b', 'c']);
    tasks.end('c');
    await queue.drain();
  });

  it('takes tasks queued ahead before those queued earlier without it', async () => {
    const queue = new EmbeddedTaskQueue(1);
    const tasks = heldTasks();
    queue.setHandler(tasks.handler);
    await queue.enqueue([ref('first'), ref('e1'), ref('e2')]);
    await queue.enqueue([ref('d1'), ref('d2')], { ahead: true });
    for (const key of ['first', 'd1', 'd2', 'e1', 'e2']) {
      await turn();
      expect(tasks.started[tasks.started.length - 1]).toBe(key);
      tasks.end(key);
    }
    await queue.drain();
  });

  it('drops the tasks still queued when drained, and waits for the running ones', async () => {
    const queue = new EmbeddedTaskQueue(1);
    const tasks = heldTasks();
    queue.setHandler(tasks.handler);
    await queue.enqueue([ref('a'), ref('b')]);
    await turn();
    let drained = false;
    const draining = queue.drain().then(() => (drained = true));
    await turn();
    expect(drained).toBe(false);
    tasks.end('a');
    await draining;
    expect(tasks.started).toEqual(['a']);
  });
});
