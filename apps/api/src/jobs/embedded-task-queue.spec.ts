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

/** A queue of `slots` copying and `listingSlots` listing slots over held tasks. */
function heldQueue(slots: number, listingSlots = 1) {
  const queue = new EmbeddedTaskQueue(slots, listingSlots);
  const tasks = heldTasks();
  queue.setHandler(tasks.handler);
  return { queue, tasks };
}

describe('EmbeddedTaskQueue', () => {
  beforeAll(() => Logger.overrideLogger(false));

  it('runs as many tasks at once as it has slots, the next when one returns', async () => {
    const { queue, tasks } = heldQueue(2);
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
    const { queue, tasks } = heldQueue(1);
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

  it('runs listing tasks in a lane of their own: one lists while the copying slots are taken, and copies never wait behind listing', async () => {
    const { queue, tasks } = heldQueue(1);
    await queue.enqueue([ref('d1'), ref('d2')]);
    await queue.enqueue([ref('e1'), ref('e2')], { listing: true });
    await turn();
    expect(tasks.started).toEqual(['d1', 'e1']);
    // The listing lane's next task waits for its own slot, not for the copying one.
    tasks.end('e1');
    await turn();
    expect(tasks.started).toEqual(['d1', 'e1', 'e2']);
    // And the copying lane's next task for its own, not for the listing one.
    tasks.end('d1');
    await turn();
    expect(tasks.started).toEqual(['d1', 'e1', 'e2', 'd2']);
    tasks.end('d2');
    tasks.end('e2');
    await queue.drain();
  });

  it('drops the tasks still queued in either lane when drained, and waits for the running ones', async () => {
    const { queue, tasks } = heldQueue(1);
    await queue.enqueue([ref('a'), ref('b')]);
    await queue.enqueue([ref('e1'), ref('e2')], { listing: true });
    await turn();
    let drained = false;
    const draining = queue.drain().then(() => (drained = true));
    await turn();
    expect(drained).toBe(false);
    tasks.end('a');
    await turn();
    expect(drained).toBe(false);
    tasks.end('e1');
    await draining;
    expect(tasks.started).toEqual(['a', 'e1']);
  });
});
